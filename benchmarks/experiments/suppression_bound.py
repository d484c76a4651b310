"""The fewest copies any publisher must suppress, release by release (design.md §5).

The global composition (section 2.3.2) reads whole releases: their rows, ``N(s)`` (cluster
segments plus global bag) and the other whole releases. It does not depend on the clustering,
so for a release about to be published after a given history, a lower bound on suppression
follows from the true corpus alone: per private term s, the least ``x`` such that, with ``x``
copies of s removed (the published rate fixed before, as the service fixes it) and ``c``
counterfeit rows of fresh non-private sets added (outside every overlap, after the rates), no
row of the new release nor of an earlier one has global serial risk over ``r_th`` for s
(formulas 5, 6, 9, 12-15). A term that must *gain* copies instead (an earlier release holds
more) is mended by s-counterfeits and counts 0; a term that neither x nor s-counterfeits mend
is reported as stuck. The cluster composition only adds to the bound.

Written apart from :mod:`app.core.risk` (``lgamma`` sums, no shared code), so that the bound is
a second computation, not the publisher's own. The series is published by the service with
``--params`` and the bound printed against what the service suppressed:

    python -m benchmarks.experiments.suppression_bound --corpus 2 --rep 0.8 --seed 1 \
        --params '{"max_suppression": 1.0}'
"""

from __future__ import annotations

import argparse
import json
import math
from collections import Counter
from collections.abc import Sequence

from app.core.errors import CoreError
from app.core.history import SeriesHistory
from app.core.model import PublishedRelease, Row, Transaction
from app.core.params import parse_params
from app.core.pipeline import publish
from app.core.segen import choose_private_terms, segen
from app.io.corpora import corpora_dir
from app.io.corpus import read_corpus

DATA = corpora_dir()
_NAN = float("nan")


def _lcomb(n: int, k: int) -> float:
    if n < 0 or k < 0 or k > n:
        return -math.inf
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def _lse(values: list[float]) -> float:
    finite = [v for v in values if v != -math.inf]
    if not finite:
        return -math.inf
    top = max(finite)
    return top + math.log(sum(math.exp(v - top) for v in finite))


def _ratio(n_s: int, n: int, o: int, r1: int, r2: int, z: int) -> float:
    """log P(O|s∈T) − log P(O|s∉T), formulas 13 and 14 (shared denominators cancel)."""
    rest = n - n_s
    a = _lse([_lcomb(n_s - 1, r - z) + _lcomb(rest, o - r) for r in range(r1, r2 + 1)])
    b = _lse([_lcomb(n_s, r) + _lcomb(rest - 1, o - r - z) for r in range(r1, r2 + 1)])
    if a == -math.inf and b == -math.inf:
        return _NAN
    if b == -math.inf:
        return math.inf
    return -math.inf if a == -math.inf else a - b


def _beta(n_s: int, n: int, sides: Sequence[tuple[int, int, int]], codes: Sequence[int]) -> float:
    """Formula 12 for a row with z ``codes`` (0 out, 1 in, 2 either) against ``sides``, each
    ``(N(O), N(s), N)`` of another whole release."""
    if n_s <= 0:
        return 0.0
    if n_s >= n:
        return 1.0
    logit, certain_for, certain_against = math.log(n_s / (n - n_s)), 0, 0
    for (o, other_s, other_n), code in zip(sides, codes, strict=True):
        if not o:
            continue
        r1 = max(n_s - (n - o), other_s - (other_n - o), 0)
        r2 = min(o, n_s, other_s)
        if r1 > r2:
            continue  # formula 6: an empty range tells nothing
        options = [_ratio(n_s, n, o, r1, r2, z) for z in ((0,), (1,), (0, 1))[code]]
        feasible = [v for v in options if not math.isnan(v)]
        if not feasible:
            continue
        best = max(feasible)
        if best == math.inf:
            certain_for += 1
        elif best == -math.inf:
            certain_against += 1
        else:
            logit += best
    if certain_against:
        return 0.0
    if certain_for:
        return 1.0
    return 1 / (1 + math.exp(-logit)) if logit >= 0 else math.exp(logit) / (1 + math.exp(logit))


class Bound:
    """Whole releases of a history plus the true corpus of the next release."""

    def __init__(
        self,
        published: Sequence[PublishedRelease],
        corpus: Sequence[Transaction],
        private: frozenset[str],
    ) -> None:
        self.rows: list[Counter[Row]] = []
        self.totals: list[Counter[str]] = []
        self.rates: list[dict[str, float]] = []
        for release in published:
            rows: Counter[Row] = Counter()
            totals: Counter[str] = Counter(release.global_bag)
            for cluster in release.clusters:
                rows.update(tuple(r) for r in cluster.rows)
                totals.update(cluster.private_counts)
            self.rows.append(rows)
            self.totals.append(+totals)
            self.rates.append(dict(release.population_rates))
        self.rows.append(Counter(tuple(sorted(t.terms - private)) for t in corpus))
        self.totals.append(Counter(s for t in corpus for s in t.terms & private))
        self.rates.append({s: k / len(corpus) for s, k in self.totals[-1].items()})
        self.j = len(self.rows) - 1
        self.n = [sum(r.values()) for r in self.rows]
        m = len(self.rows)
        self.o = [[0] * m for _ in range(m)]
        for a in range(m):
            for b in range(a + 1, m):
                size = sum(min(k, self.rows[b].get(r, 0)) for r, k in self.rows[a].items())
                self.o[a][b] = self.o[b][a] = size
        self.patterns = [
            {
                tuple(_code(k, self.rows[b].get(r, 0)) for b in range(m) if b != a)
                for r, k in self.rows[a].items()
            }
            for a in range(m)
        ]

    def passes(self, s: str, x: int, c: int, y: int, limit: float) -> bool:
        """Whether every row of every release holding s is within ``limit`` for s once the new
        release lost ``x`` copies and gained ``c`` fresh rows and ``y`` fresh rows holding s
        (these before the rates are fixed, as BP adds them)."""
        j, m = self.j, len(self.rows)
        n = [self.n[b] + (c + y if b == j else 0) for b in range(m)]
        held = [self.totals[b].get(s, 0) for b in range(m)]
        held[j] += y - x
        for a in range(m):
            if not held[a]:
                continue
            rate = self.rates[a].get(s, 0.0)
            if a == j and y:
                rate = (self.totals[j][s] + y) / (self.n[j] + y)
            if rate <= 0.0:
                continue
            others = [b for b in range(m) if b != a]
            sides = [(self.o[a][b], held[b], n[b]) for b in others]
            patterns = set(self.patterns[a])
            if a == j and (c or y):
                patterns.add(tuple(0 for _ in others))
            if any(_beta(held[a], n[a], sides, p) / rate > limit for p in patterns):
                return False
        return True

    def least(self, s: str, c: int, r_th: float, most_added: int = 60) -> int | None:
        """Copies of s to suppress (0 when s-counterfeits mend it instead), None if stuck."""
        limit = r_th * (1 + 1e-9)
        for x in range(self.totals[self.j][s] + 1):
            if self.passes(s, x, c, 0, limit):
                return x
        for y in range(1, most_added + 1):
            if self.passes(s, 0, c, y, limit):
                return 0
        return None


def _code(mine: int, theirs: int) -> int:
    return 0 if theirs == 0 else 1 if theirs >= mine else 2


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--corpus", type=int, choices=(1, 2), default=2)
    parser.add_argument("--sz", type=float, default=0.05)
    parser.add_argument("--releases", type=int, default=5)
    parser.add_argument("--rep", type=float, default=0.4)
    parser.add_argument("--r-th", type=float, default=8.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--counterfeits",
        type=float,
        nargs="+",
        default=[0.0, 0.04],
        help="fresh counterfeit rows as a share of the release",
    )
    parser.add_argument("--params", default="{}", help="extra sanony parameters as JSON")
    args = parser.parse_args()
    corpus = read_corpus(DATA / f"bms-webview-{args.corpus}.dat")
    private = choose_private_terms([t for tr in corpus for t in tr.terms], 0.1, seed=args.seed)
    params = parse_params(
        "sanony", {"r_th": args.r_th, "seed": args.seed, **json.loads(args.params)}
    )
    size = round(args.sz * len(corpus))
    history = SeriesHistory()
    totals = [0] * len(args.counterfeits)
    copies_total = 0
    for positions in segen(len(corpus), size, args.releases, args.rep, seed=args.seed):
        snapshot = [Transaction(corpus[p].terms, f"p{p}") for p in positions]
        copies = sum(len(t.terms & private) for t in snapshot)
        copies_total += copies
        found: list[str] = []
        if history.releases:
            bound = Bound(history.releases, snapshot, private)
            for i, share in enumerate(args.counterfeits):
                least = [
                    bound.least(s, round(share * size), args.r_th)
                    for s in sorted(bound.totals[bound.j])
                ]
                need = sum(x for x in least if x)
                totals[i] += need
                found.append(
                    f"c={share:.0%}: {need} copies, "
                    f"{sum(1 for x in least if x is None)} terms stuck"
                )
        try:
            publication = publish("sanony", history, snapshot, private, params)
        except CoreError as exc:
            print(f"release {history.next_release_no}: bound {found}; refused: {exc.message}")
            break
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
        print(
            f"release {publication.release.release_no}: {copies} private copies, "
            f"1% budget {max(math.floor(0.01 * copies + 1e-9), 3)}; bound {found}; "
            f"suppressed {sum(publication.ledger.suppressed.values())}, counterfeits "
            f"{publication.ledger.counterfeit_rows}",
            flush=True,
        )
    print(
        f"series: bound {totals} of {copies_total} copies "
        f"({', '.join(f'{x / max(copies_total, 1):.2%}' for x in totals)})"
    )


if __name__ == "__main__":
    main()

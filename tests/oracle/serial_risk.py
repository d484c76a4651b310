"""Independent oracle for the adversary's view (design.md §4, Sanony paper sections 2.3-2.4).

A second implementation of serial risk written from the spec alone, in exact arithmetic
(:class:`fractions.Fraction` and :func:`math.comb`), so that property tests can judge the
production code. It imports nothing from ``app.core`` but the data types of ``app.core.model``.
The only float it touches is a published population rate, converted exactly (``Fraction(rate)``).

The model is the paper's, exactly as an auditor computes it from the public releases (design.md §4,
"No weaker adversary"); formula numbers of ``papers/sanony-bewong-2019.txt``:

- a *view* is what the adversary treats as one cluster: a published cluster ``C*`` (its rows,
  ``N(s, C*) = N(s, C_c) + N(s, C_ol)``, Definition 4) or, for the global composition (2.3.2),
  a whole release (all its rows, ``N(s)`` = cluster segments plus global bag);
- the *overlap* ``O`` of two views of different releases is the plain multiset intersection of
  their non-private sets (Definition 6: a set counts ``min`` of its multiplicities), whenever it
  is non-empty, however many clusters of either release hold the same set;
- the *cover* of a cluster (Definition 8) is its overlaps with every cluster of every other
  release, earlier and later; the cover of a whole release is its overlaps with ALL the other
  whole releases;
- per overlap and term: the s-range w.r.t. each view (formula 5), their intersection
  ``[r1, r2]`` (formula 6; empty: the overlap is skipped for that term), the likelihood pair
  ``(L1, L0)`` = (P(O | s in T), P(O | s not in T)) of formulas 13 and 14;
- the prior ``alpha = N(s, view) / N(view)`` (formula 9) and the posterior ``beta`` of formula 12,
  one product over the whole cover (a cluster's and a whole release's alike);
- the serial risk of a row for ``s`` (formula 15): ``max(beta_cluster, beta_global) / ss(s)``
  with ``ss`` the published population rate of the row's own release.

Rules where the paper is silent (design.md §4 decisions, aligned with the auditor's reference):

- a row whose set the view holds more often than the overlap does may be inside or outside
  ``O`` (``z`` of formulas 13/14): per overlap the ``z`` with the larger ratio ``L1/L0`` is
  taken (``+inf`` when ``L0 = 0``); a pair ``(0, 0)`` is infeasible, and an overlap without a
  feasible ``z`` is skipped;
- contradictory evidence: ``alpha = 0`` gives 0 and ``alpha >= 1`` gives 1; otherwise a chosen
  pair with ``L1 = 0`` (certain against s) gives 0, even if another has ``L0 = 0``; else a pair
  with ``L0 = 0`` (certain for s) gives 1; an empty cover leaves the prior;
- judged terms of a view: ``N(s, view) > 0`` and a positive published rate of the row's release
  (a term with copies but rate 0 has no defined risk and is not judged);
- a row violates ``r_th`` when its serial risk exceeds ``r_th + 1e-9`` (absolute tolerance for
  the floating point of production and auditor), counted once per published row.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from numbers import Rational

from app.core.model import PublishedRelease, Row

__all__ = [
    "RiskKey",
    "RowKey",
    "Violation",
    "View",
    "ABSOLUTE_TOLERANCE",
    "DEFAULT_R_TH",
    "comb",
    "s_range",
    "overlap_range",
    "likelihoods",
    "allowed_z",
    "choose_pair",
    "posterior",
    "canonical",
    "cluster_views",
    "release_view",
    "Cover",
    "cover",
    "cluster_cover",
    "global_cover",
    "view_posterior",
    "judged_terms",
    "posteriors",
    "serial_risks",
    "row_risks",
    "max_risk",
    "violations",
    "judge_summary",
]

#: ``(release position, cluster_id, row index within cluster.rows, private term)``.
RiskKey = tuple[int, str, int, str]
#: ``(release position, cluster_id, row index within cluster.rows)``: one published row.
RowKey = tuple[int, str, int]
#: ``(release position, cluster_id, row index, worst private term, serial risk)``.
Violation = tuple[int, str, int, str, Fraction]
#: ``(L1, L0)`` = (P(O | s in T), P(O | s not in T)).
Pair = tuple[Fraction, Fraction]

#: A risk counts as a violation only past ``r_th`` plus this (the auditor's absolute tolerance).
ABSOLUTE_TOLERANCE = Fraction(1, 10**9)
#: design.md §1's default ``r_th``, used by :func:`judge_summary` when none is given.
DEFAULT_R_TH = 8


# --------------------------------------------------------------------------- combinatorics


def comb(n: int, k: int) -> int:
    """Binomial coefficient with ``C(n, k) = 0`` whenever ``n < 0``, ``k < 0`` or ``k > n``."""
    if n < 0 or k < 0 or k > n:
        return 0
    return math.comb(n, k)


def s_range(n_s: int, n: int, o: int) -> tuple[int, int]:
    """Formula 5: copies of s the overlap can hold w.r.t. a view of ``n`` rows and ``n_s`` copies.

    ``f1 = max(N(s,C*) - (N(C*) - N(O)), 0)``, ``f2 = min(N(O), N(s,C*))``.
    """
    return max(n_s - (n - o), 0), min(o, n_s)


def overlap_range(mine: tuple[int, int], theirs: tuple[int, int]) -> tuple[int, int] | None:
    """Formula 6: intersection of the two s-ranges, or ``None`` when empty (overlap skipped)."""
    r1, r2 = max(mine[0], theirs[0]), min(mine[1], theirs[1])
    return None if r1 > r2 else (r1, r2)


@lru_cache(maxsize=1 << 16)
def likelihoods(n_s: int, n: int, o: int, r1: int, r2: int, z: int) -> Pair:
    """Formulas 13 and 14 for a view of ``n`` rows, ``n_s`` copies of s and an overlap of ``o``.

    ``z = 1`` when the row is inside the overlap. Returns ``(0, 0)`` (infeasible) when the
    denominator ``C(n - 1, o - z)`` is 0, i.e. ``z`` contradicts the sizes.
    """
    n_sbar = n - n_s
    denominator = comb(n - 1, o - z)
    if denominator == 0:
        return Fraction(0), Fraction(0)
    l1 = sum(comb(n_s - 1, r - z) * comb(n_sbar, o - r) for r in range(r1, r2 + 1))
    l0 = sum(comb(n_s, r) * comb(n_sbar - 1, o - r - z) for r in range(r1, r2 + 1))
    return Fraction(l1, denominator), Fraction(l0, denominator)


def allowed_z(in_view: int, in_overlap: int) -> tuple[int, ...]:
    """Where a row may lie given the multiplicity of its set in the view and in the overlap.

    Not in the overlap at all: outside (0). Every copy in the overlap: inside (1). Otherwise the
    adversary does not know which copy is the victim's and may assume either (decision).
    """
    if in_overlap <= 0:
        return (0,)
    if in_overlap >= in_view:
        return (1,)
    return (0, 1)


def _strength(pair: Pair) -> tuple[int, Fraction]:
    """Order likelihood pairs by how strongly they favour s (ratio ``L1/L0``, ``+inf`` first)."""
    l1, l0 = pair
    if l0 == 0:
        return 1, Fraction(0)  # L1 > 0 = L0: ratio +inf
    return 0, l1 / l0  # L1 = 0 < L0 (ratio 0) ranks last


def choose_pair(pairs: Iterable[Pair]) -> Pair | None:
    """The most s-favourable feasible pair, or ``None`` when every pair is ``(0, 0)``.

    The posterior (12) is increasing in each overlap's ratio ``L1/L0``, so maximising the
    posterior over the ``z`` of each overlap means choosing the best ratio per overlap.
    """
    feasible = [p for p in pairs if p[0] != 0 or p[1] != 0]
    return max(feasible, key=_strength) if feasible else None


def posterior(alpha: Fraction, pairs: Sequence[Pair]) -> Fraction:
    """Formula 12 over the chosen (feasible) pairs of a cover.

    ``alpha`` 0 or 1 (or more) is final. A pair with ``L1 = 0`` gives 0 (certain evidence
    against s wins, as in the auditor's reference); else one with ``L0 = 0`` gives 1; no pairs
    leave the prior.
    """
    if alpha <= 0:
        return Fraction(0)
    if alpha >= 1:
        return Fraction(1)
    if any(l1 == 0 for l1, _ in pairs):
        return Fraction(0)
    if any(l0 == 0 for _, l0 in pairs):
        return Fraction(1)
    numerator = alpha * math.prod((l1 for l1, _ in pairs), start=Fraction(1))
    rest = (1 - alpha) * math.prod((l0 for _, l0 in pairs), start=Fraction(1))
    return numerator / (numerator + rest)


# --------------------------------------------------------------------------- views


def canonical(row: Iterable[str]) -> Row:
    """A non-private set as the adversary reads it: the set of its terms, order and repeats
    ignored (rows of the project are already canonical; a public JSON row need not be)."""
    return tuple(sorted(set(row)))


@dataclass(frozen=True)
class View:
    """What the adversary treats as one cluster: its rows as a multiset and ``N(s)`` per term."""

    rows: Counter[Row]
    counts: Mapping[str, int]

    @property
    def size(self) -> int:
        return self.rows.total()

    def n_s(self, term: str) -> int:
        return self.counts.get(term, 0)


def _add(total: Counter[str], counts: Mapping[str, int]) -> None:
    for term, n in counts.items():
        total[term] += n


def cluster_views(release: PublishedRelease) -> list[View]:
    """One view per published cluster: ``N(s, C*) = N(s, C_c) + N(s, C_ol)`` (Definition 4)."""
    views = []
    for cluster in release.clusters:
        counts: Counter[str] = Counter()
        _add(counts, cluster.private_counts)
        _add(counts, cluster.global_share)
        views.append(View(Counter(canonical(row) for row in cluster.rows), counts))
    return views


def release_view(release: PublishedRelease) -> View:
    """The whole release as one cluster (2.3.2): every row; cluster segments plus global bag.

    The global shares are not counted: they only re-split copies that are in the bag.
    """
    rows: Counter[Row] = Counter()
    counts: Counter[str] = Counter()
    for cluster in release.clusters:
        rows.update(canonical(row) for row in cluster.rows)
        _add(counts, cluster.private_counts)
    _add(counts, release.global_bag)
    return View(rows, counts)


#: The cover of a view (Definition 8): each non-empty overlap with the view it came from.
Cover = list[tuple[Counter[Row], View]]


def cover(view: View, others: Iterable[View]) -> Cover:
    """Non-empty overlaps (multiset intersections of rows, Definition 6) of ``view``."""
    overlaps = ((view.rows & other.rows, other) for other in others)
    return [(overlap, other) for overlap, other in overlaps if overlap]


def cluster_cover(views: Sequence[Sequence[View]], i: int, c: int) -> Cover:
    """Cover of cluster ``c`` of release ``i``: its overlaps with every cluster of every other
    release (``views[k]`` are the cluster views of release ``k``), earlier and later."""
    others = (other for k, release_views in enumerate(views) if k != i for other in release_views)
    return cover(views[i][c], others)


def global_cover(wholes: Sequence[View], i: int) -> Cover:
    """Cover of release ``i`` taken as one cluster (2.3.2): its overlaps with all the other
    whole releases, combined like any cluster's cover (one product in formula 12)."""
    return cover(wholes[i], (whole for k, whole in enumerate(wholes) if k != i))


def view_posterior(view: View, row: Row, term: str, the_cover: Cover) -> Fraction:
    """``beta(T*, s)`` (formula 12) of a row of ``view`` given its cover."""
    n, n_s = view.size, view.n_s(term)
    if n_s <= 0:
        return Fraction(0)
    if n_s >= n:  # every row has s (or more copies than rows)
        return Fraction(1)
    row = canonical(row)
    pairs = []
    for overlap, other in the_cover:
        o = overlap.total()
        rng = overlap_range(s_range(n_s, n, o), s_range(other.n_s(term), other.size, o))
        if rng is None:
            continue
        zs = allowed_z(view.rows[row], overlap[row])
        best = choose_pair(likelihoods(n_s, n, o, rng[0], rng[1], z) for z in zs)
        if best is not None:
            pairs.append(best)
    return posterior(Fraction(n_s, n), pairs)


# --------------------------------------------------------------------------- serial risk


def _rate(release: PublishedRelease, term: str) -> Fraction:
    """The published population rate ``ss(s)``, exactly (0 when not published)."""
    return Fraction(release.population_rates.get(term, 0))


def judged_terms(release: PublishedRelease, view: View) -> set[str]:
    """Terms judged for a view of ``release``: copies in the view and a positive rate."""
    return {s for s, n in view.counts.items() if n > 0 and _rate(release, s) > 0}


def posteriors(
    releases: Sequence[PublishedRelease],
) -> dict[RiskKey, tuple[Fraction, Fraction]]:
    """``(beta_cluster, beta_global)`` for every row and judged term of every release.

    A row's terms are those judged for its cluster or for its whole release; ``beta`` of a view
    without a copy of the term is 0.
    """
    views = [cluster_views(release) for release in releases]
    wholes = [release_view(release) for release in releases]
    result: dict[RiskKey, tuple[Fraction, Fraction]] = {}
    for i, release in enumerate(releases):
        whole_cover = global_cover(wholes, i)
        whole_terms = judged_terms(release, wholes[i])
        global_beta: dict[tuple[Row, str], Fraction] = {}
        for c, (cluster, view) in enumerate(zip(release.clusters, views[i], strict=True)):
            this_cover = cluster_cover(views, i, c)
            terms = sorted(whole_terms | judged_terms(release, view))
            cluster_beta: dict[tuple[Row, str], Fraction] = {}
            for index, published in enumerate(cluster.rows):
                row = canonical(published)
                for s in terms:
                    if (row, s) not in cluster_beta:
                        cluster_beta[row, s] = view_posterior(view, row, s, this_cover)
                    if (row, s) not in global_beta:
                        global_beta[row, s] = view_posterior(wholes[i], row, s, whole_cover)
                    result[i, cluster.cluster_id, index, s] = (
                        cluster_beta[row, s],
                        global_beta[row, s],
                    )
    return result


def serial_risks(releases: Sequence[PublishedRelease]) -> dict[RiskKey, Fraction]:
    """Formula 15: ``max(beta_cluster, beta_global) / ss(s)`` for every row and judged term.

    ``ss`` is the row's own release's published population rate, converted exactly
    (``Fraction(float)``); judged terms have a positive rate, so the division is defined.
    """
    return {
        key: max(betas) / _rate(releases[key[0]], key[3])
        for key, betas in posteriors(releases).items()
    }


def row_risks(releases: Sequence[PublishedRelease]) -> dict[RowKey, tuple[Fraction, str | None]]:
    """Every published row's serial risk, the maximum over its judged terms, with that term
    (the first in term order on ties); ``(0, None)`` for a row with no judged term."""
    result: dict[RowKey, tuple[Fraction, str | None]] = {}
    for i, release in enumerate(releases):
        for cluster in release.clusters:
            for index in range(len(cluster.rows)):
                result[i, cluster.cluster_id, index] = (Fraction(0), None)
    for (i, cid, index, s), risk in sorted(serial_risks(releases).items()):
        if result[i, cid, index][1] is None or risk > result[i, cid, index][0]:
            result[i, cid, index] = (risk, s)
    return result


def max_risk(releases: Sequence[PublishedRelease]) -> Fraction:
    """The largest serial risk of any row of the series (0 when there is none)."""
    return max(serial_risks(releases).values(), default=Fraction(0))


def _over(risk: Fraction, r_th: float | Rational) -> bool:
    return risk > Fraction(r_th) + ABSOLUTE_TOLERANCE


def violations(releases: Sequence[PublishedRelease], r_th: float | Rational) -> list[Violation]:
    """Published rows whose serial risk exceeds ``r_th + 1e-9``, one per row, in key order,
    each with its worst term and risk."""
    return [
        (*key, term, risk)
        for key, (risk, term) in sorted(row_risks(releases).items())
        if term is not None and _over(risk, r_th)
    ]


def judge_summary(
    releases: Sequence[PublishedRelease], r_th: float | Rational = DEFAULT_R_TH
) -> dict[int, tuple[int, Fraction, int]]:
    """Per ``release_no``: ``(published rows, max serial risk, rows over r_th + 1e-9)``, what the
    auditor's judge prints per release. ``r_th`` is not part of a published release here: it
    defaults to design.md's 8."""
    summary: dict[int, tuple[int, Fraction, int]] = {
        release.release_no: (release.n_rows, Fraction(0), 0) for release in releases
    }
    for (i, _, _), (risk, _) in row_risks(releases).items():
        no = releases[i].release_no
        rows, worst, over = summary[no]
        summary[no] = (rows, max(worst, risk), over + _over(risk, r_th))
    return summary

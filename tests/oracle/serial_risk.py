"""Independent oracle for the adversary's view (SPEC section 4, Sanony paper sections 2.3-2.4).

A second implementation of serial risk written from the spec alone, in exact arithmetic
(:class:`fractions.Fraction` and :func:`math.comb`), so that property tests can judge the
production code. It imports nothing from ``app.core`` but the data types of ``app.core.model``.

Vocabulary (the paper's, formula numbers of ``papers/sanony-bewong-2019.txt``):

- a *view* is what the adversary treats as one cluster: a published cluster ``C*`` (rows,
  ``N(s, C*) = private_counts + global_share``) or, for the global composition (2.3.2), a whole
  release (all its rows, ``N(s) = cluster segments + global bag``);
- the *overlap* ``O`` of two views of different releases is the multiset intersection of their
  rows; the *cover* of a view is its non-empty overlaps with the views of every other release;
- per overlap and term the adversary gets the likelihood pair ``(L1, L0)`` = (P(O | s in T),
  P(O | s not in T)) of formulas 13 and 14, and combines the cover with formula 12.

Decisions taken by the team where the paper is silent (see each function):

- a row whose set the view holds more often than the overlap does may be inside or outside
  ``O``: per overlap, the ``z`` giving the most s-favourable likelihood pair is taken;
- a likelihood pair ``(0, 0)`` is infeasible; an overlap with no feasible pair, or with an empty
  range ``[r1, r2]``, is skipped (uninformative);
- any chosen pair with ``L0 = 0`` (certain evidence of s) makes ``beta = 1``, even if another
  has ``L1 = 0``; otherwise any ``L1 = 0`` makes ``beta = 0``; an empty cover gives the prior;
- a non-private set links two clusters only when each of their releases holds it in a single
  cluster (:func:`cluster_cover`);
- the global composition compares the release with each other whole release on its own and
  keeps the highest posterior (:func:`posteriors`).
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
    "Violation",
    "View",
    "comb",
    "s_range",
    "overlap_range",
    "likelihoods",
    "allowed_z",
    "choose_pair",
    "posterior",
    "cluster_views",
    "release_view",
    "Cover",
    "cover",
    "cluster_cover",
    "global_covers",
    "view_posterior",
    "posteriors",
    "serial_risks",
    "max_risk",
    "violations",
]

#: ``(release position, cluster_id, row index within cluster.rows, private term)``.
RiskKey = tuple[int, str, int, str]
#: ``(release position, cluster_id, row index, private term, serial risk)``.
Violation = tuple[int, str, int, str, Fraction]
#: ``(L1, L0)`` = (P(O | s in T), P(O | s not in T)).
Pair = tuple[Fraction, Fraction]

#: Production works in floating point: a risk counts as a violation only past this factor.
RELATIVE_TOLERANCE = Fraction(1, 10**9)


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

    ``alpha`` 0 or 1 is final. A pair with ``L0 = 0`` gives 1 (certain evidence of s wins);
    else one with ``L1 = 0`` gives 0; no pairs leave the prior.
    """
    if alpha <= 0:
        return Fraction(0)
    if alpha >= 1:
        return Fraction(1)
    if any(l0 == 0 for _, l0 in pairs):
        return Fraction(1)
    if any(l1 == 0 for l1, _ in pairs):
        return Fraction(0)
    numerator = alpha * math.prod((l1 for l1, _ in pairs), start=Fraction(1))
    rest = (1 - alpha) * math.prod((l0 for _, l0 in pairs), start=Fraction(1))
    return numerator / (numerator + rest)


# --------------------------------------------------------------------------- views


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
        views.append(View(Counter(cluster.rows), counts))
    return views


def release_view(release: PublishedRelease) -> View:
    """The whole release as one cluster (2.3.2): every row; cluster segments plus global bag.

    The global shares are not counted: they only re-split copies that are in the bag.
    """
    rows: Counter[Row] = Counter()
    counts: Counter[str] = Counter()
    for cluster in release.clusters:
        rows.update(cluster.rows)
        _add(counts, cluster.private_counts)
    _add(counts, release.global_bag)
    return View(rows, counts)


#: The cover of a view (Definition 8): each non-empty overlap with the view it came from.
Cover = list[tuple[Counter[Row], View]]


def cover(view: View, others: Sequence[View]) -> Cover:
    """Non-empty overlaps (multiset intersections of rows) of ``view`` with ``others``."""
    overlaps = ((view.rows & other.rows, other) for other in others)
    return [(overlap, other) for overlap, other in overlaps if overlap]


def _spread(release_views: Sequence[View]) -> set[Row]:
    """Sets held by more than one cluster of a release: they link nothing (team decision)."""
    seen: Counter[Row] = Counter()
    for v in release_views:
        seen.update(set(v.rows))
    return {row for row, n in seen.items() if n > 1}


def _linked(overlap: Counter[Row], blocked: set[Row]) -> Counter[Row]:
    return Counter({row: m for row, m in overlap.items() if row not in blocked})


def cluster_cover(views: Sequence[Sequence[View]], i: int, c: int) -> Cover:
    """Cover of cluster ``c`` of release ``i`` under the team's linking rule.

    Team decision (see ``app/core/risk/state.py``): a non-private set links two clusters only when
    each of their two releases holds it in a single cluster.
    """
    mine = views[i][c]
    result: Cover = []
    for k, release_views in enumerate(views):
        if k == i:
            continue
        blocked = _spread(views[i]) | _spread(release_views)
        for other in release_views:
            overlap = _linked(mine.rows & other.rows, blocked)
            if overlap:
                result.append((overlap, other))
    return result


def global_covers(
    views: Sequence[Sequence[View]], wholes: Sequence[View], i: int
) -> list[Cover]:
    """One single-overlap cover of release ``i`` per other whole release, same linking rule
    (team decision, ``app/core/risk/overlap.py``: ``release_overlap``)."""
    covers: list[Cover] = []
    for k, whole in enumerate(wholes):
        if k == i:
            continue
        overlap = _linked(wholes[i].rows & whole.rows, _spread(views[i]) | _spread(views[k]))
        covers.append([(overlap, whole)] if overlap else [])
    return covers or [[]]


def view_posterior(view: View, row: Row, term: str, the_cover: Cover) -> Fraction:
    """``beta(T*, s)`` (formula 12) of a row of ``view`` given its cover."""
    n, n_s = view.size, view.n_s(term)
    alpha = Fraction(n_s, n) if n else Fraction(0)
    if alpha <= 0 or alpha >= 1:  # no copy / every row has s (or more copies than rows)
        return Fraction(0) if alpha <= 0 else Fraction(1)
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
    return posterior(alpha, pairs)


# --------------------------------------------------------------------------- serial risk


def _terms(release: PublishedRelease, views: Sequence[View], whole: View) -> list[str]:
    """Terms judged for a release: a positive published rate, or any copy in the release."""
    terms = {s for s, rate in release.population_rates.items() if Fraction(rate) > 0}
    for view in (*views, whole):
        terms.update(s for s, n in view.counts.items() if n > 0)
    return sorted(terms)


def posteriors(
    releases: Sequence[PublishedRelease],
) -> dict[RiskKey, tuple[Fraction, Fraction]]:
    """``(beta_cluster, beta_global)`` for every row and judged term of every release."""
    views = [cluster_views(release) for release in releases]
    wholes = [release_view(release) for release in releases]
    result: dict[RiskKey, tuple[Fraction, Fraction]] = {}
    for i, release in enumerate(releases):
        terms = _terms(release, views[i], wholes[i])
        # Team decision: the global composition compares the release with each other whole
        # release on its own (Example 10) and keeps the highest posterior, instead of
        # multiplying heavily overlapping whole-release comparisons as if independent.
        whole_covers = global_covers(views, wholes, i)
        global_beta: dict[tuple[Row, str], Fraction] = {}
        for c, (cluster, view) in enumerate(zip(release.clusters, views[i], strict=True)):
            this_cover = cluster_cover(views, i, c)
            cluster_beta: dict[tuple[Row, str], Fraction] = {}
            for index, row in enumerate(cluster.rows):
                for s in terms:
                    if (row, s) not in cluster_beta:
                        cluster_beta[row, s] = view_posterior(view, row, s, this_cover)
                    if (row, s) not in global_beta:
                        global_beta[row, s] = max(
                            view_posterior(wholes[i], row, s, g) for g in whole_covers
                        )
                    result[i, cluster.cluster_id, index, s] = (
                        cluster_beta[row, s],
                        global_beta[row, s],
                    )
    return result


def serial_risks(releases: Sequence[PublishedRelease]) -> dict[RiskKey, Fraction]:
    """Formula 15: ``max(beta_cluster, beta_global) / ss(s)`` for every row and judged term.

    ``ss`` is the row's own release's published population rate, converted exactly
    (``Fraction(float)``). Judged terms are those with a positive rate and any term with copies
    in the release; a term with copies but no positive rate raises :class:`ValueError` when a
    row gets a positive posterior for it (its risk would be infinite: a malformed release).
    """
    risks: dict[RiskKey, Fraction] = {}
    for key, (beta_cluster, beta_global) in posteriors(releases).items():
        beta = max(beta_cluster, beta_global)
        rate = releases[key[0]].population_rates.get(key[3], 0)
        ss = Fraction(rate)
        if ss > 0:
            risks[key] = beta / ss
        elif beta == 0:
            risks[key] = Fraction(0)
        else:
            raise ValueError(f"row {key} has posterior {beta} for a term with rate {rate!r}")
    return risks


def max_risk(releases: Sequence[PublishedRelease]) -> Fraction:
    """The largest serial risk of any row of the series (0 when there is none)."""
    return max(serial_risks(releases).values(), default=Fraction(0))


def violations(releases: Sequence[PublishedRelease], r_th: float | Rational) -> list[Violation]:
    """Rows whose serial risk exceeds ``r_th * (1 + 1e-9)``, in key order.

    The relative tolerance only absorbs the rounding of production's floating point.
    """
    bound = Fraction(r_th) * (1 + RELATIVE_TOLERANCE)
    return [(*key, risk) for key, risk in serial_risks(releases).items() if risk > bound]

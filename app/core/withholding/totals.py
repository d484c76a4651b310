"""The published total of each private term: the global composition without counterfeits
(design.md §5.8; section 2.3.2, formulas 5, 6, 12-15).

The global composition reads each whole release as one cluster. Between two releases, a count
that falls lifts the rows of the release with more copies that lie outside the overlap (they
must carry what the overlap cannot), and a count that rises lifts the new release's rows
outside it: with ``o = N(O)``, a term absent from the other release lifts them by about
``N / (N - o)`` per such release (formula 13 with ``r2 = 0``), and formula 12 multiplies the
lifts over every other release. Only the new release's count may change, and only downwards
(suppression), so for each term the counts at which no row of any release is over ``r_th``
form a range ``[lo, hi]``; the release publishes ``min(true, hi)``, or the term cannot be
published safely at all (``true < lo``: a count fell too far under an earlier one, and only
copies that do not exist would mend it).

Admission (``min_copies``): a term that no earlier release published enters the series only
with at least that many copies. A term first published with one or two copies is the one most
likely to vanish from a later release, and each release without it lifts the first one's
rows by about ``N / (N - o)`` (measured: docs/lab/true-rows.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from app.core.risk.incremental import SeriesRisk

__all__ = ["Settled", "settle_totals"]


@dataclass(slots=True)
class Settled:
    """The totals chosen for the new release, and the terms no total makes safe."""

    #: Term -> copies the release publishes (cluster segments plus global bag).
    totals: dict[str, int] = field(default_factory=dict)
    #: Terms withheld because they are new to the series with fewer than ``min_copies``.
    not_admitted: dict[str, int] = field(default_factory=dict)
    #: Terms over ``r_th`` at every count the release holds: term -> true count.
    pinned: dict[str, int] = field(default_factory=dict)


def settle_totals(
    risk: SeriesRisk,
    true_totals: Mapping[str, int],
    published_before: Iterable[str],
    series_terms: Iterable[str],
    min_copies: int,
    reserve: float = 1.0,
) -> Settled:
    """For every private term of the series, the copies release ``risk.j`` publishes.

    Parameters
    ----------
    risk:
        The series with the new release as Anony built it (only its counts will change).
    true_totals:
        ``N(s, T)`` of the new corpus.
    published_before:
        Terms some earlier release published (copies in a cluster or the bag).
    series_terms:
        Every term to settle: the new release's and every earlier release's (a term absent
        from the new release still lifts the rows of the releases that hold it).
    min_copies:
        Admission: the fewest copies with which a term may enter the series.
    reserve:
        The new release's own rows are kept within ``r_th / reserve`` where a count that is
        safe so exists: what they keep below ``r_th`` is what a later release whose count
        falls may lift them by (formula 12 multiplies every release's evidence). A term that
        enters the series must keep them within ``r_th / (2 reserve)`` (never below 1, the
        risk of a row no other release reads), with at least ``min_copies``: its rows
        already carry the lift of every earlier release without it (about ``N / (N - o)``
        each), so a term that appears late has the least room left.
    """
    before = set(published_before)
    settled = Settled()
    first = True
    for s in sorted(set(series_terms) | set(true_totals)):
        true = true_totals.get(s, 0)
        top = true
        if s not in before:
            # Entering: at least min_copies within the admission's reserve, or withheld.
            best = None
            if true >= min_copies:
                limit = max(1.0, risk.r_th / (2 * reserve))
                best = risk.most_total(s, true, limit, refresh=first)
                first = False
            if best is None or best < min_copies:
                if true:
                    settled.not_admitted[s] = true
                best = 0
            settled.totals[s] = best
            continue
        # The release does not change while its terms are settled: one refresh for all.
        best = None
        if reserve > 1:
            limit = max(1.0, risk.r_th / reserve)
            best = risk.most_total(s, top, limit, refresh=first)
            first = False
        if best is None:
            best = risk.most_total(s, top, refresh=first)
            first = False
        if best is None:
            settled.pinned[s] = true
            best = top
        settled.totals[s] = best
    return settled


def worst_rows(risk: SeriesRisk, terms: Sequence[str]) -> dict[str, float]:
    """The highest serial risk of any row, per term, through the global composition as the
    series stands (what a refusal reports as the smallest ``r_th`` that would publish)."""
    worst: dict[str, float] = {}
    for _ref, _row, s, value, kind in risk.violations():
        if kind == "global" and s in terms:
            worst[s] = max(worst.get(s, 0.0), value)
    return worst

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

The steady level (``level_margin``): a term enters under its true count, by the margin times
the count's spread and over the share of a release the overlap with the next holds
(:func:`entry_level`), and no later release publishes more than that first count
(:func:`level_cap`; or more where the overlap leaves room, or up to a count published
already). A count that came in high and falls later then falls under the level by little:
without it, BMS-WebView-1's term ``20803`` was published with 27, 24 and 26 copies and then
held 18, and 8 of 20 releases were refused (docs/lab/long-series-true-rows.md, "a steady
level").
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from app.core.risk.incremental import SeriesRisk

__all__ = [
    "Level",
    "Settled",
    "entry_level",
    "level_cap",
    "levels",
    "settle_totals",
    "steady_cap",
]


@dataclass(slots=True)
class Settled:
    """The totals chosen for the new release, and the terms no total makes safe."""

    #: Term -> copies the release publishes (cluster segments plus global bag).
    totals: dict[str, int] = field(default_factory=dict)
    #: Terms withheld because they are new to the series with fewer than ``min_copies``.
    not_admitted: dict[str, int] = field(default_factory=dict)
    #: Terms over ``r_th`` at every count the release holds: term -> true count.
    pinned: dict[str, int] = field(default_factory=dict)


class Level(NamedTuple):
    """What the history says of a term: the count the first release that published it
    published (its level) and the highest count any release published."""

    first: int
    highest: int


def levels(releases: Iterable[Mapping[str, int]]) -> dict[str, Level]:
    """Each published term's :class:`Level`, from the releases' totals oldest first (the
    history is the only state: a series published before levels existed has its first counts
    as levels).

    >>> levels([{"s": 0, "t": 9}, {"s": 12, "t": 7}, {"s": 15}])
    {'t': Level(first=9, highest=9), 's': Level(first=12, highest=15)}
    """
    found: dict[str, Level] = {}
    for totals in releases:
        for s, k in totals.items():
            if not k:
                continue
            known = found.get(s)
            if known is None:
                found[s] = Level(k, k)
            elif k > known.highest:
                found[s] = Level(known.first, k)
    return found


def steady_cap(count: int, margin: float, overlap: float) -> int:
    """The most copies a release may publish of a term whose later counts are about ``count``
    or more: ``(count - margin * sqrt(count)) / overlap``.

    A later release with ``c`` copies caps the copies the overlap ``O`` of two whole
    releases may hold at ``c`` (formulas 5, 6); the adversary expects ``N(O)/N`` of the
    earlier release's copies there, so a count under ``overlap`` times the earlier one puts
    the rest on the earlier release's rows outside ``O``, and formula 12 multiplies that lift
    over every later release so low. A count moves by about ``sqrt(count)`` from one release
    to the next (SeGen: 1.1 ``sqrt(count)``, upsampled or not;
    docs/lab/long-series-true-rows.md), so a low later count is ``count - margin *
    sqrt(count)``, and the earlier one may be at most that over ``overlap``.

    >>> steady_cap(100, 2.0, 0.9), steady_cap(100, 2.0, 0.5), steady_cap(20, 1.0, 1.0)
    (88, 160, 15)
    """
    low = count - margin * math.sqrt(count)
    return max(0, math.floor(low / max(overlap, 1e-9) + 1e-9))


def entry_level(true: int, margin: float | None, overlap: float = 1.0) -> int:
    """The most copies a term new to the series enters with (its level): the
    :func:`steady_cap` of its true count, never more than ``true``; ``None``: no level.

    >>> entry_level(20, 1.0), entry_level(100, 2.0, 0.9), entry_level(100, 2.0, 0.5)
    (15, 88, 100)
    >>> entry_level(20, None)
    20
    """
    if margin is None:
        return true
    return min(true, steady_cap(true, margin, overlap))


def level_cap(level: Level, margin: float | None, overlap: float = 1.0) -> int | None:
    """The most copies a later release publishes of a term: its level, or more where the
    overlap leaves room (a count that stays near the level still covers :func:`steady_cap`
    of the higher one), and never less than a count some release published already (one
    that rises again to an earlier count is no fall under it, whatever the overlap was when
    that count was allowed); ``None``: no level, no cap.

    >>> level_cap(Level(15, 15), 1.0), level_cap(Level(100, 100), 2.0, 0.5)
    (15, 160)
    >>> level_cap(Level(15, 21), 1.0), level_cap(Level(15, 15), None) is None
    (21, True)
    """
    if margin is None:
        return None
    return max(level.highest, steady_cap(level.first, margin, overlap))


def settle_totals(
    risk: SeriesRisk,
    true_totals: Mapping[str, int],
    published_levels: Mapping[str, Level],
    series_terms: Iterable[str],
    min_copies: int,
    reserve: float = 1.0,
    margin: float | None = None,
    overlap: float = 1.0,
) -> Settled:
    """For every private term of the series, the copies release ``risk.j`` publishes.

    Parameters
    ----------
    risk:
        The series with the new release as Anony built it (only its counts will change).
    true_totals:
        ``N(s, T)`` of the new corpus.
    published_levels:
        Each term some earlier release published, with its :class:`Level` (:func:`levels`).
    series_terms:
        Every term to settle: the new release's and every earlier release's (a term absent
        from the new release still lifts the rows of the releases that hold it).
    min_copies:
        Admission: the fewest true copies with which a term may enter the series; it enters
        with at least :func:`entry_level` of them (``min_copies`` itself without a level).
    reserve:
        The new release's own rows are kept within ``r_th / reserve`` where a count that is
        safe so exists: what they keep below ``r_th`` is what a later release whose count
        falls may lift them by (formula 12 multiplies every release's evidence). A term that
        enters the series must keep them within ``r_th / (2 reserve)`` (never below 1, the
        risk of a row no other release reads), with at least ``min_copies``: its rows
        already carry the lift of every earlier release without it (about ``N / (N - o)``
        each), so a term that appears late has the least room left.
    margin:
        The steady level (``None``: none): a term enters with at most
        :func:`entry_level` copies, and every later release publishes at most that level,
        so that no published count stands above the level and a later fall is a fall under
        it, of about the count's spread less the margin.
    overlap:
        The share of a release's rows the overlap of two whole releases holds, ``N(O)/N``
        (:func:`entry_level`).
    """
    settled = Settled()
    first = True
    for s in sorted(set(series_terms) | set(true_totals)):
        true = true_totals.get(s, 0)
        if s not in published_levels:
            # Entering: at least min_copies within the admission's reserve, or withheld.
            best = None
            if true >= min_copies:
                limit = max(1.0, risk.r_th / (2 * reserve))
                best = risk.most_total(s, entry_level(true, margin, overlap), limit, refresh=first)
                first = False
            least = entry_level(min_copies, margin, overlap)
            if margin is not None:
                least = max(least, 1)  # a level of none is no admission
            if best is None or best < least:
                if true:
                    settled.not_admitted[s] = true
                best = 0
            settled.totals[s] = best
            continue
        cap = level_cap(published_levels[s], margin, overlap)
        top = true if cap is None else min(true, cap)
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

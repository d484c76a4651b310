"""Rows of the new release generalised so that no published holding cluster is overlapped
(design.md §5.8; Definition 6, formulas 5, 6, 12).

A holding cluster (:mod:`~app.core.withholding.clustering`) publishes copies of private terms
and was built of sets new to the series: nothing overlapped it when it was published. When a
later row has one of its sets (the same patient seen again, or a chance match), that row would
overlap it, and the new release's cluster holding the row would cap the copies of s the
overlap may hold at its own count; the published cluster's other rows would carry the rest,
lifted by about ``(N - k) / (N - k - N(O))`` per such release (formulas 5, 6, 13 with
``r2 = 0``), and formula 12 multiplies the lifts of every later release. Counterfeits with
copies of s would widen the range; this mechanism adds nothing, so the row is *generalised*
instead: its rarest public terms are suppressed, one at a time, until its set is one no
published holding cluster has. The row keeps its private terms and its other public terms;
what it loses is counted (``public_terms_suppressed``) and reported.

A set the release holds several times is generalised once, all its rows alike (they stay one
set, and one cluster, design.md §5.6).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from app.core.model import PublishedRelease, Row

__all__ = ["Delinked", "delink"]


class Delinked:
    """What generalisation suppressed: public occurrences per term, and rows touched."""

    def __init__(self) -> None:
        self.terms: Counter[str] = Counter()
        self.rows = 0


def holding_sets(releases: Iterable[PublishedRelease]) -> set[Row]:
    """The sets of every published cluster that publishes a copy (its segment or its global
    share): what a new row must not overlap."""
    held: set[Row] = set()
    for release in releases:
        for cluster in release.clusters:
            if any(cluster.private_counts.values()) or any(cluster.global_share.values()):
                held.update(cluster.rows)
    return held


def delink(
    rows: Sequence[Row], published: Sequence[PublishedRelease]
) -> tuple[list[Row], Delinked]:
    """``rows`` with every row whose set a published holding cluster has generalised: its
    public terms, rarest first in the new release (then by term), suppressed until the set is
    none a holding cluster has (the empty set at the last).

    >>> from app.core.model import PublishedCluster
    >>> old = PublishedRelease(1, [PublishedCluster("c1", [("a", "z")], {"s": 1})], {}, {})
    >>> new, done = delink([("a", "z"), ("a",), ("a", "b")], [old])
    >>> new, dict(done.terms), done.rows
    ([('a',), ('a',), ('a', 'b')], {'z': 1}, 1)
    """
    held = holding_sets(published)
    done = Delinked()
    if not held:
        return list(rows), done
    frequency: Counter[str] = Counter(t for row in rows for t in row)
    replaced: dict[Row, Row] = {}
    out: list[Row] = []
    for row in rows:
        if row not in held:
            out.append(row)
            continue
        general = replaced.get(row)
        if general is None:
            general = row
            for term in sorted(row, key=lambda t: (frequency[t], t)):
                if general not in held:
                    break
                general = tuple(t for t in general if t != term)
            replaced[row] = general
        done.terms.update(t for t in row if t not in general)
        done.rows += 1
        out.append(general)
    return out, done

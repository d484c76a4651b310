"""Clusters that hold copies and clusters that hold none (design.md §5.8).

Without counterfeits, a cluster that publishes copies of s is protected only by the clusters
of later releases that overlap it holding enough copies too (Lemma 4's ``f2``, formula 5), and
those by theirs, release after release: a chain true rows cannot always keep. So a release is
cut in two kinds of clusters:

- **holding** clusters, of rows whose non-private set is *new* to the series (no earlier
  release holds it) and unique in the release: they overlap nothing today, and no later
  release will overlap them either (a later row with one of their sets is generalised first,
  :mod:`~app.core.withholding.delinking`). They keep their copies up to Anony's threshold;
- **copy-free** clusters, of the other rows (a set an earlier release holds, or that several
  rows share, such as a popular page or the empty set): they continue the published lineages
  (:func:`~app.core.anonymisation.lineage.lineage_clusters`) and publish no copy of their own:
  their copies go to the global bag, their global shares are 0. Holding none, they read
  nothing into any cluster they overlap (``N(s, C*) = 0`` on one side leaves the published
  ranges whole wherever the other holds none either).

Every copy of a set is in one cluster of the release (design.md §5.6) either way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from app.core.anonymisation.lineage import lineage_clusters, lineage_components, whole_set_runs
from app.core.model import Row

__all__ = ["holding_and_copy_free"]


def holding_and_copy_free(
    rows: Sequence[Row],
    groups: dict[Row, list[int]],
    published: Sequence[Iterable[Iterable[Row]]],
    cluster_size: int,
) -> tuple[list[list[int]], list[bool]]:
    """A partition of ``rows`` (lists of positions) and, per cluster, whether it holds copies.

    ``groups`` maps each distinct row to its positions; ``published`` gives each earlier
    release's clusters' rows.

    >>> rows = [("a",), ("a",), ("b",), ("c",), ("d",)]
    >>> groups = {r: [i for i, x in enumerate(rows) if x == r] for r in dict.fromkeys(rows)}
    >>> holding_and_copy_free(rows, groups, [], 2)
    ([[0, 1], [2, 3, 4]], [False, True])
    """
    lineage_of = lineage_components([list(dict.fromkeys(c)) for c in r] for r in published)
    # The empty set is never new: every release has rows with no public term to spare, and a
    # holding cluster's set must be one later rows can be generalised away from.
    new = [row for row, at in groups.items() if row and row not in lineage_of and len(at) == 1]
    known = [row for row, at in groups.items() if not row or row in lineage_of or len(at) > 1]
    size = max(cluster_size, 1)
    if len(new) < size:
        # Too few new rows for a cluster of their own: the whole release holds none.
        known, new = list(groups), []
    copy_free = _clusters(known, groups, lineage_of, size)
    holding = _clusters(new, groups, {}, size)
    if copy_free and holding and sum(map(len, copy_free)) < size:
        # Too few known rows for a cluster of their own: they join a holding cluster, which
        # then holds nothing (a known set beside new ones would be read by its overlaps).
        copy_free = [holding.pop(0) + copy_free[0]]
    return copy_free + holding, [False] * len(copy_free) + [True] * len(holding)


def _clusters(
    sets: list[Row], groups: dict[Row, list[int]], lineage_of: dict[Row, int], size: int
) -> list[list[int]]:
    """The rows of ``sets`` clustered (continuing published lineages where there are any),
    as positions into the release."""
    if not sets:
        return []
    # The clustering reads the rows only through their positions (``groups``), and compares
    # positions only as the order of the sets' first rows: the release's own positions order
    # them as positions into the subset would, so they are handed over as they are (a
    # subset's rows and positions, and the clusters mapped back, were three passes over
    # every row).
    sub_groups = {row: groups[row] for row in sets}
    if lineage_of:
        return lineage_clusters(sets, lineage_of, size, sub_groups)
    return whole_set_runs(sets, size, sub_groups)

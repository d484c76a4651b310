"""Overlaps, s-ranges and covers (design.md §4; Definitions 5, 6 and 8, formulas 5 and 6)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Container, Sequence
from dataclasses import dataclass

from app.core.model import PublishedRelease, Row
from app.core.risk.state import ClusterRef, SeriesState

__all__ = [
    "Overlap",
    "CoverEntry",
    "s_range",
    "overlap_range",
    "cluster_cover",
    "release_overlap",
    "release_cover",
]


@dataclass(slots=True)
class Overlap:
    """``O(C*, C'*)``: the other cluster and the common rows with their multiplicities."""

    other: ClusterRef
    rows: dict[Row, int]
    size: int


@dataclass(slots=True)
class CoverEntry:
    """One overlap of a cluster as the auditor's ``/cover`` endpoint shows it."""

    cluster_id: str
    other_release: int
    other_cluster_id: str
    size: int
    ranges: dict[str, tuple[int, int]]


def s_range(n_s: int, n: int, o: int) -> tuple[int, int]:
    """Copies of s the overlap can hold w.r.t. one cluster (formula 5).

    ``f1 = max(N(s,C*) - (N(C*) - N(O)), 0)``, ``f2 = min(N(O), N(s,C*))``.

    >>> s_range(1, 2, 1)
    (0, 1)
    >>> s_range(1, 2, 2)
    (1, 1)
    """
    return max(n_s - (n - o), 0), min(o, n_s)


def overlap_range(n_s: int, n: int, other_n_s: int, other_n: int, o: int) -> tuple[int, int] | None:
    """The range ``[r1, r2]`` of O for s (formula 6), or ``None`` when it is empty.

    An empty range tells the adversary nothing about s, so callers skip the overlap (design.md §4).

    >>> overlap_range(1, 2, 0, 2, 1)  # Example 9, HIV: C1_1 [0, 1] and C1_2 [0, 0]
    (0, 0)
    """
    f1, f2 = s_range(n_s, n, o)
    g1, g2 = s_range(other_n_s, other_n, o)
    r1, r2 = max(f1, g1), min(f2, g2)
    return (r1, r2) if r1 <= r2 else None


def cluster_cover(
    state: SeriesState, ref: ClusterRef, releases: Container[int] | None = None
) -> list[Overlap]:
    """Cover Ω(C*) (Definition 8): overlaps with clusters of every other release.

    The overlap with each cluster of another release is the multiset intersection of their
    non-private sets (Definition 6): a set counts ``min`` of its multiplicities, whichever other
    clusters also hold it (design.md §4, "No weaker adversary"). ``releases`` restricts the
    other side to those release positions.
    """
    j = ref[0]
    cluster = state.cluster(ref)
    common: dict[ClusterRef, dict[Row, int]] = {}
    for row, mult in cluster.counts.items():
        for other in state.holders(row):
            if other[0] == j or (releases is not None and other[0] not in releases):
                continue
            common.setdefault(other, {})[row] = min(mult, state.cluster(other).counts[row])
    return [Overlap(other, rows, sum(rows.values())) for other, rows in sorted(common.items())]


def release_overlap(state: SeriesState, j: int, k: int) -> Counter[Row]:
    """Common rows of whole releases ``j`` and ``k`` (global composition, section 2.3.2): the
    multiset intersection of their rows, every set counted (design.md §4)."""
    first, second = state.releases[j].row_counts, state.releases[k].row_counts
    small, large = (first, second) if len(first) <= len(second) else (second, first)
    common: Counter[Row] = Counter()
    for row, mult in small.items():
        if row in large:
            common[row] = min(mult, large[row])
    return common


def release_cover(releases: Sequence[PublishedRelease], index: int) -> list[CoverEntry]:
    """The overlaps of every cluster of ``releases[index]`` with its ranges per private term."""
    state = SeriesState.from_published(releases)
    entries: list[CoverEntry] = []
    for c, cluster in enumerate(state.releases[index].clusters):
        for overlap in cluster_cover(state, (index, c)):
            other = state.cluster(overlap.other)
            ranges: dict[str, tuple[int, int]] = {}
            for s in sorted(cluster.terms() | other.terms()):
                found = overlap_range(
                    cluster.n_s(s), cluster.n, other.n_s(s), other.n, overlap.size
                )
                if found is not None:
                    ranges[s] = found
            entries.append(
                CoverEntry(
                    cluster_id=cluster.cluster_id,
                    other_release=state.releases[overlap.other[0]].release_no,
                    other_cluster_id=other.cluster_id,
                    size=overlap.size,
                    ranges=ranges,
                )
            )
    return entries

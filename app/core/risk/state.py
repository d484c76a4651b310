"""Mutable working view of a series: releases, clusters and the row index behind overlaps.

The risk model and Sanony both work on a :class:`SeriesState`. Published releases are loaded
into it unchanged; the release being built is appended and grows as counterfeits are added.
The index maps each distinct row (non-private set) to the clusters that hold it, so overlaps
are found by looking rows up, never by comparing every pair of clusters (design.md §4, "Cost").

design.md §4, "No weaker adversary": a non-private set links every pair of clusters of two different
releases that hold it (the plain multiset intersection), however many clusters of a release
hold it. Publishers avoid releases that read the same rows many times over (design.md §5); the
adversary does not look away.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

import numpy as np

from app.core.model import PublishedCluster, PublishedRelease, Row

__all__ = ["ClusterState", "ReleaseState", "SeriesState", "ClusterRef", "row_count_matrix"]

#: (release position, cluster position) within a :class:`SeriesState`.
ClusterRef = tuple[int, int]

_NO_HOLDERS: frozenset[ClusterRef] = frozenset()


@dataclass(slots=True)
class ClusterState:
    """A cluster ``C*`` as the adversary sees it, plus what the publisher tracks while building.

    ``rows[:n_true]`` are true rows and the rest counterfeits until the release is finalised.
    """

    cluster_id: str
    rows: list[Row]
    private_counts: Counter[str]
    global_share: dict[str, int]
    counts: Counter[Row] = field(default_factory=Counter)
    n_true: int = 0
    bp: int = 0
    fp1: int = 0
    fp2: int = 0
    published_counterfeits: int = 0
    #: Bumped whenever a row is added or taken back, so that cached risk knows ``rows`` moved
    #: (:mod:`app.core.risk.incremental`).
    revision: int = 0
    #: Whether ``rows`` is this cluster's own list. A published cluster's state reads the
    #: published list itself (:meth:`from_published`): the rows of every earlier release, a
    #: second time, were 80 MB per release of 10,000,000 rows in the compute child.
    #: :meth:`SeriesState.add_row` copies it before the first change.
    owns_rows: bool = True

    def __post_init__(self) -> None:
        if not self.counts:
            self.counts = Counter(self.rows)

    @property
    def n(self) -> int:
        """``N(C*)``."""
        return len(self.rows)

    def n_s(self, term: str) -> int:
        """``N(s, C*) = N(s, C_c) + N(s, C_ol)``."""
        return self.private_counts.get(term, 0) + self.global_share.get(term, 0)

    def terms(self) -> set[str]:
        """Private terms with ``N(s, C*) > 0``."""
        held = {s for s, k in self.private_counts.items() if k}
        held.update(s for s, k in self.global_share.items() if k)
        return held

    @property
    def of_one_set(self) -> bool:
        """Whether one non-private set (the empty one included) holds more than half of the
        cluster's true rows: a lineage of near-identical rows (design.md §5)."""
        return 2 * max(self.counts.values(), default=0) > max(self.n_true, 1)

    @property
    def counterfeits(self) -> int:
        """Counterfeits the adversary is told about per cluster: BP + FP1's (section 3.2);
        the release's total counts FP2's and the repair's too."""
        return self.published_counterfeits or (self.bp + self.fp1)

    @classmethod
    def from_published(cls, cluster: PublishedCluster) -> ClusterState:
        return cls(
            cluster_id=cluster.cluster_id,
            rows=cluster.rows,
            private_counts=Counter({s: k for s, k in cluster.private_counts.items() if k}),
            global_share={s: k for s, k in cluster.global_share.items() if k},
            n_true=len(cluster.rows),
            published_counterfeits=cluster.counterfeits,
            owns_rows=False,
        )

    def own_rows(self) -> list[Row]:
        """``rows``, made this cluster's own list first if it is the published one."""
        if not self.owns_rows:
            self.rows = list(self.rows)
            self.owns_rows = True
        return self.rows


@dataclass(slots=True)
class ReleaseState:
    """A whole release: its clusters, global bag and published population rates."""

    release_no: int
    clusters: list[ClusterState]
    global_bag: Counter[str]
    rates: dict[str, float]
    row_counts: Counter[Row] = field(default_factory=Counter)
    #: ``N(T*)``: rows of every cluster, counterfeits included (kept up to date by
    #: :meth:`SeriesState.add_row`).
    n: int = 0
    #: Bumped whenever a row of any cluster is added or taken back.
    revision: int = 0

    def __post_init__(self) -> None:
        if not self.row_counts:
            row_counts = self.row_counts
            for cluster in self.clusters:
                if row_counts.keys().isdisjoint(cluster.counts):
                    # Counter.update adds a mapping key by key in Python; a cluster whose
                    # sets no earlier cluster holds (every set is in one cluster of a release,
                    # design.md §5.6) is merged as a dict, in the same order: 13% of
                    # loading 19 published releases of 20,000 rows.
                    dict.update(row_counts, cluster.counts)
                else:
                    row_counts.update(cluster.counts)
        self.n = sum(self.row_counts.values())

    def totals(self) -> Counter[str]:
        """``N(s, T*)`` for global composition: cluster segments plus global bag (2.3.2)."""
        totals: Counter[str] = Counter()
        for cluster in self.clusters:
            totals.update(cluster.private_counts)
        totals.update(self.global_bag)
        return +totals

    def total(self, term: str) -> int:
        """``N(s, T*)`` of one term (what :meth:`totals` gives for it, without the others)."""
        return sum(c.private_counts.get(term, 0) for c in self.clusters) + self.global_bag.get(
            term, 0
        )

    @classmethod
    def from_published(cls, release: PublishedRelease) -> ReleaseState:
        return cls(
            release_no=release.release_no,
            clusters=[ClusterState.from_published(c) for c in release.clusters],
            global_bag=Counter({s: k for s, k in release.global_bag.items() if k}),
            rates=dict(release.population_rates),
        )


class SeriesState:
    """Releases of a series with the index from row to the clusters holding it."""

    def __init__(self, releases: Iterable[ReleaseState] = ()) -> None:
        self.releases: list[ReleaseState] = []
        #: Row -> the clusters holding it. A row only one cluster holds (most rows) reads
        #: that cluster's one frozen set, shared by all of them; a row held by several has a
        #: set of its own (:meth:`_hold`). A set per row was 26 MiB of release 18's 116 MiB
        #: peak on the 20 x 20,000 series.
        self.index: dict[Row, AbstractSet[ClusterRef]] = {}
        #: ``N(O)`` of whole releases (global composition), kept up to date as rows come and go.
        self._overlap_sizes: dict[tuple[int, int], int] = {}
        #: Every row added or taken back, in order: ``(release position, row)``. Caches of
        #: derived values replay it from where they last read (:meth:`rows_changed`).
        self.row_log: list[tuple[int, Row]] = []
        for release in releases:
            self.append(release)

    @classmethod
    def from_published(cls, releases: Sequence[PublishedRelease]) -> SeriesState:
        return cls(ReleaseState.from_published(r) for r in releases)

    def append(self, release: ReleaseState) -> int:
        """Add a release (indexing its rows) and return its position."""
        j = len(self.releases)
        self.releases.append(release)
        index = self.index
        for c, cluster in enumerate(release.clusters):
            # One reference per cluster, shared by every row it indexes: a tuple per (row,
            # cluster) was 18 MiB at release 20 of the 20 x 20,000 series.
            ref = (j, c)
            alone = frozenset((ref,))
            for row in cluster.counts:
                held = index.get(row)
                if held is None:
                    index[row] = alone
                elif isinstance(held, set):
                    held.add(ref)
                else:
                    index[row] = {*held, ref}
        return j

    def _hold(self, row: Row, ref: ClusterRef) -> None:
        """Index ``row`` as held by ``ref`` too."""
        held = self.index.get(row)
        if held is None:
            self.index[row] = {ref}
        elif isinstance(held, set):
            held.add(ref)
        elif ref not in held:
            self.index[row] = {*held, ref}

    def _drop(self, row: Row, ref: ClusterRef) -> None:
        """``ref`` no longer holds ``row``."""
        held = self.index[row]
        if isinstance(held, set):
            held.discard(ref)
        elif ref in held:
            self.index[row] = set(held) - {ref}

    def cluster(self, ref: ClusterRef) -> ClusterState:
        return self.releases[ref[0]].clusters[ref[1]]

    def add_row(self, ref: ClusterRef, row: Row) -> None:
        """Append a (counterfeit) row to a cluster, keeping every count and the index right."""
        cluster = self.cluster(ref)
        release = self.releases[ref[0]]
        cluster.own_rows().append(row)
        cluster.counts[row] += 1
        release.row_counts[row] += 1
        release.n += 1
        cluster.revision += 1
        release.revision += 1
        self._hold(row, ref)
        self._count_overlaps(ref[0], row, 1)
        self.row_log.append((ref[0], row))

    def remove_last_row(self, ref: ClusterRef) -> Row:
        """Take back the last row appended to a cluster (a counterfeit that did not help)."""
        cluster = self.cluster(ref)
        release = self.releases[ref[0]]
        self._count_overlaps(ref[0], cluster.rows[-1], -1)
        row = cluster.own_rows().pop()
        cluster.counts[row] -= 1
        release.row_counts[row] -= 1
        release.n -= 1
        cluster.revision += 1
        release.revision += 1
        self.row_log.append((ref[0], row))
        if not cluster.counts[row]:
            del cluster.counts[row]
            self._drop(row, ref)
        if not release.row_counts[row]:
            del release.row_counts[row]
        return row

    def set_row(self, ref: ClusterRef, position: int, row: Row) -> None:
        """Put ``row`` in place of the row at ``position`` of a cluster, keeping every count,
        the index, ``N(O)`` and the log right: what :meth:`remove_last_row` then
        :meth:`add_row` would do, at any position (a what-if on the release being built whose
        rows are replaced in place, such as decoupling's trials; ``N(T*)`` does not move)."""
        self.set_rows(ref, ((position, row),))

    def set_rows(self, ref: ClusterRef, changes: Iterable[tuple[int, Row]]) -> None:
        """:meth:`set_row` for each ``(position, row)`` of ``changes``, the counts, the index
        and ``N(O)`` moved once per distinct row: a trial of decoupling replaces hundreds of
        thousands of rows of a few thousand sets, and a call per row (``N(O)`` of every pair
        of releases looked at each time) was most of its time at 1,000,000 rows.

        The counts, the index, ``N(O)`` and the rows logged are what :meth:`set_row` one change
        after the other gives (a row whose count does not move is not logged: nothing derived
        from it moves). Rows that leave are counted before rows that come, each in the order
        of ``changes``; so a row that leaves and comes back within one call keeps its place in
        the counts' order, which one change at a time would move to the end."""
        cluster = self.cluster(ref)
        release = self.releases[ref[0]]
        rows = cluster.own_rows()
        moved: dict[Row, int] = {}
        for position, row in changes:
            old = rows[position]
            if old == row:
                continue
            rows[position] = row
            moved[old] = moved.get(old, 0) - 1
            moved[row] = moved.get(row, 0) + 1
        if not moved:
            return
        leaving = [(row, step) for row, step in moved.items() if step < 0]
        coming = [(row, step) for row, step in moved.items() if step > 0]
        for row, step in leaving + coming:
            before = release.row_counts.get(row, 0)
            self._move_overlaps(ref[0], row, before, before + step)
            cluster.counts[row] += step
            release.row_counts[row] += step
            if step < 0:
                if cluster.counts[row] <= 0:
                    del cluster.counts[row]
                    self._drop(row, ref)
                if release.row_counts[row] <= 0:
                    del release.row_counts[row]
            else:
                self._hold(row, ref)
            self.row_log.append((ref[0], row))
        cluster.revision += 1
        release.revision += 1

    def holders(self, row: Row) -> AbstractSet[ClusterRef]:
        """The clusters that hold ``row`` (read-only). A row no cluster holds shares one empty
        set: the counterfeit factory asks this of every candidate row, most of them fresh,
        and a new empty set each time was 14% of its time at release 20 of the 20 x 20,000
        series."""
        return self.index.get(row, _NO_HOLDERS)

    def overlap_size(self, j: int, k: int) -> int:
        """``N(O)`` of whole releases ``j`` and ``k``: the size of their multiset intersection
        (global composition, section 2.3.2), kept up to date by :meth:`add_row`."""
        key = (min(j, k), max(j, k))
        found = self._overlap_sizes.get(key)
        if found is None:
            self._count_every_overlap()
            found = self._overlap_sizes[key]
        return found

    def _count_every_overlap(self) -> None:
        """``N(O)`` of every pair of whole releases not counted yet, at once: each release's
        row counts as a row of a matrix (one column per distinct row of the series), and a
        pair's ``N(O)`` the sum of their element-wise minimum. The global composition asks
        for every pair (each published release against every other); pair
        by pair, that read the rows of a release once per other release (0.78 CPU s on
        release 20 of the 20,000-row series, 0.14 s this way)."""
        _, counts = row_count_matrix(self.releases)
        for a in range(len(self.releases) - 1):
            sizes = np.minimum(counts[a], counts[a + 1 :]).sum(axis=1, dtype=np.int64)
            for b, size in enumerate(sizes.tolist(), a + 1):
                self._overlap_sizes.setdefault((a, b), size)

    def _move_overlaps(self, j: int, row: Row, before: int, after: int) -> None:
        """Release ``j``'s count of ``row`` moves from ``before`` to ``after``: each ``N(O)``
        of ``j`` moves by ``min(after, N_k(row)) - min(before, N_k(row))``, what
        :meth:`_count_overlaps` adds up one copy at a time."""
        if not self._overlap_sizes:
            return
        for (a, b), size in self._overlap_sizes.items():
            if j in (a, b):
                theirs = self.releases[b if a == j else a].row_counts.get(row, 0)
                self._overlap_sizes[a, b] = size + min(after, theirs) - min(before, theirs)

    def _count_overlaps(self, j: int, row: Row, step: int) -> None:
        """A copy of ``row`` comes into release ``j`` (``step`` 1, counted after it is added) or
        leaves it (-1, counted before): ``min(N_j(row), N_k(row))`` moves with it when
        ``N_j(row) <= N_k(row)``."""
        if not self._overlap_sizes:
            return
        mine = self.releases[j].row_counts.get(row, 0)
        for (a, b), size in self._overlap_sizes.items():
            if j in (a, b):
                theirs = self.releases[b if a == j else a].row_counts.get(row, 0)
                if mine <= theirs:
                    self._overlap_sizes[a, b] = size + step


def row_count_matrix(
    releases: Sequence[ReleaseState], skip: int | None = None
) -> tuple[list[np.ndarray], np.ndarray]:
    """Each release's row counts as a row of a matrix, one column per distinct row of the
    series (numbered in the order the releases' ``row_counts`` first give them), and per
    release the column of each of its rows in ``row_counts`` order. Release ``skip`` is left
    out (its columns empty, its counts 0): the release being built, which changes.

    Held as arrays (4 and 8 bytes an entry) for a whole publication by the global composition:
    as lists of ints they added 11 MiB to release 20's peak on the 20,000-row series. A count
    is at most a release's rows: 4 bytes hold it below 2**31 rows."""
    ids: dict[Row, int] = {}
    columns = [
        np.array(
            [] if k == skip else [ids.setdefault(row, len(ids)) for row in release.row_counts],
            dtype=np.intp,
        )
        for k, release in enumerate(releases)
    ]
    largest = max((release.n for release in releases), default=0)
    counts = np.zeros((len(releases), len(ids)), dtype=np.int32 if largest < 2**31 else np.int64)
    for k, release in enumerate(releases):
        if k != skip:
            counts[k, columns[k]] = list(release.row_counts.values())
    return columns, counts

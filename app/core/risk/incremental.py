"""Rows over ``r_th`` in a series while its newest release is being built, kept up to date.

Sanony checks its post-condition (Theorem 1) round after round while it adds counterfeits to
the new release ``j`` or suppresses copies from it; BP asks the same question of the published
releases. Each round changes a few clusters of ``j`` only, and design.md §4's model says exactly
whose risk that can move:

- the cluster composition of a cluster of ``j`` depends on the cluster and on its cover (the
  published clusters, which never change): recomputed when the cluster changed (its rows,
  ``N(s, C_c)``, ``N(s, C_ol)``) or the release's population rates did;
- the cluster composition of a published cluster ``C*`` depends on the clusters of ``j`` it
  overlaps: recomputed when one of them changed, or when a row added to a cluster of ``j``
  makes (or a row taken back ends) an overlap with it, unless what formula 12 reads of them is
  as it was (each overlap's rows and, per term of ``C*``, its range ``[r1, r2]``, formula 6:
  a row added to a cluster of ``j`` mostly leaves them so, the cover of a
  published cluster spans every release). As before, only published clusters with
  an unsafe overlap with ``j`` are judged (Lemma 3: a safe overlap has likelihood ratio 1, and
  the rest was verified when those clusters were published);
- the global composition of every release depends on ``j`` as a whole: recomputed whenever
  ``j`` changed, by :class:`~app.core.risk.composition.GlobalComposition`, which redoes only
  the terms whose evidence moved.

Nothing is approximated: a cached value is reused only when every input of formula 12 it was
computed from is unchanged, so :meth:`SeriesRisk.violations` returns exactly what judging the
whole series from scratch returns (plain multiset overlaps, the product over every other whole
release, certain-against wins; design.md §4), in the same order.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from app.core.model import Row
from app.core.risk.assess import cluster_posteriors, serial_risk
from app.core.risk.composition import GlobalComposition
from app.core.risk.overlap import Overlap, cluster_cover, overlap_range, s_range
from app.core.risk.state import ClusterRef, ClusterState, SeriesState

__all__ = ["ClusterPosteriors", "SeriesRisk", "Violation", "unsafe_overlap"]

#: ``(cluster, row, term, serial risk, composition)``: a row over ``r_th`` for a term.
Violation = tuple[ClusterRef, Row, str, float, str]

#: What a published cluster's formula 12 reads of release ``j``: per overlap with a cluster of
#: ``j``, that cluster, the common rows and the range (formula 6) of each term of the published
#: cluster, in its sorted order.
_Reading = tuple[
    tuple[ClusterRef, tuple[tuple[Row, int], ...], tuple[tuple[int, int] | None, ...]], ...
]


@dataclass(slots=True)
class _Seen:
    """What a cluster of the new release looked like when something was computed from it:
    its rows (``C^S̄`` as a multiset), ``N(s, C_c)`` and ``N(s, C_ol)``, everything of the
    cluster that formula 12 reads. Compared in order, so that a value reused is the very value
    recomputing would give, down to the order of its entries. Rows change only through
    :class:`SeriesState`, which bumps ``revision``; a row added and taken back leaves the
    same rows under a new revision, hence the rows themselves as the second test."""

    revision: int
    counts: tuple[tuple[Row, int], ...]
    private_counts: tuple[tuple[str, int], ...]
    global_share: tuple[tuple[str, int], ...]

    @classmethod
    def of(cls, cluster: ClusterState) -> _Seen:
        return cls(
            cluster.revision,
            tuple(cluster.counts.items()),
            tuple(cluster.private_counts.items()),
            tuple(cluster.global_share.items()),
        )

    def matches(self, cluster: ClusterState) -> bool:
        if self.private_counts != tuple(cluster.private_counts.items()):
            return False
        if self.global_share != tuple(cluster.global_share.items()):
            return False
        if self.revision == cluster.revision:
            return True
        if self.counts != tuple(cluster.counts.items()):
            return False
        self.revision = cluster.revision
        return True


class ClusterPosteriors:
    """:func:`~app.core.risk.assess.cluster_posteriors` of the clusters of release ``j``,
    kept while a cluster is as it was.

    A cluster's β_cluster (formula 12 over its cover) reads the cluster and the clusters of
    the other releases it overlaps, which never change while ``j`` is built; so alignment,
    FP2 and the post-condition, which judge the same clusters one after the other, compute
    each only when it changed. The dictionaries returned are shared: read them, never change
    them.
    """

    def __init__(self, state: SeriesState, j: int) -> None:
        self.state = state
        self.j = j
        self._seen: dict[int, _Seen] = {}
        self._values: dict[int, dict[Row, dict[str, float]]] = {}

    def __call__(self, c: int) -> dict[Row, dict[str, float]]:
        """β_cluster of each distinct row of cluster ``c`` of release ``j`` per term."""
        cluster = self.state.releases[self.j].clusters[c]
        seen = self._seen.get(c)
        if seen is None or not seen.matches(cluster):
            self._values[c] = cluster_posteriors(self.state, (self.j, c))
            self._seen[c] = _Seen.of(cluster)
        return self._values[c]


def unsafe_overlap(new: ClusterState, old: ClusterState, o: int) -> bool:
    """Whether the overlap (``o`` rows) of a cluster of the new release with a published one
    is not safe for some s (Lemma 3: the new cluster's s-range must hold the published
    cluster's, formula 5 w.r.t. each).

    >>> from collections import Counter
    >>> old = ClusterState("c1", [("a",), ("b",)], Counter({"s": 1}), {})
    >>> unsafe_overlap(ClusterState("c1", [("a",)], Counter({"s": 1}), {}), old, 1)
    True
    """
    for s in new.terms() | old.terms():
        f_new = s_range(new.n_s(s), new.n, o)
        f_old = s_range(old.n_s(s), old.n, o)
        if f_new[0] > f_old[0] or f_new[1] < f_old[1]:
            return True
    return False


class SeriesRisk:
    """Rows over ``r_th`` anywhere in the series, recomputed only where release ``j`` moved.

    ``j`` must be the newest release of ``state`` and the only one that changes.
    """

    def __init__(
        self,
        state: SeriesState,
        j: int,
        r_th: float,
        posteriors: ClusterPosteriors | None = None,
    ) -> None:
        self.state = state
        self.j = j
        self.r_th = r_th
        self._limit = r_th * (1 + 1e-9)
        #: Per cluster of ``j``: when its links (published clusters it overlaps) were taken,
        #: those links, and the ones whose overlap with it is not safe.
        self._linked: dict[int, _Seen] = {}
        self._links: dict[int, set[ClusterRef]] = {}
        self._unsafe_links: dict[int, set[ClusterRef]] = {}
        #: Per published cluster: the clusters of ``j`` whose overlap with it is not safe.
        self._unsafe_by: dict[ClusterRef, set[int]] = {}
        #: Per cluster of ``j``: when its own rows over ``r_th`` were computed, and those rows.
        self._judged: dict[int, _Seen] = {}
        self._rates: dict[str, float] = {}
        self._own: dict[int, list[Violation]] = {}
        #: Published clusters with an unsafe overlap with ``j``, and their rows over ``r_th``.
        self._unsafe: dict[ClusterRef, list[Violation]] = {}
        #: Per published cluster judged: what it read of ``j`` then, and its rows over r_th.
        self._read: dict[ClusterRef, tuple[_Reading, list[Violation]]] = {}
        self._global = GlobalComposition(state, j, self._limit)
        self.posteriors = posteriors if posteriors is not None else ClusterPosteriors(state, j)

    def least_total(self, s: str, start: int, stop: int, rate: float | None = None) -> int | None:
        """The least count of s in release ``j`` within ``[start, stop]`` at which the global
        composition puts no row of any release over ``r_th`` for s
        (:meth:`GlobalComposition.least_total`), or ``None``."""
        self._global.refresh()
        return self._global.least_total(s, start, stop, rate)

    def most_total(
        self, s: str, stop: int, own_limit: float | None = None, *, refresh: bool = True
    ) -> int | None:
        """The largest count of s in release ``j`` within ``[0, stop]`` at which the global
        composition puts no row of any release over ``r_th`` for s (release ``j``'s rows over
        ``own_limit`` when given), the release's rate following the count
        (:meth:`GlobalComposition.most_total`), or ``None``. ``refresh=False`` when nothing
        changed in release ``j`` since the last call (a caller asking of every term at once)."""
        if refresh:
            self._global.refresh()
        return self._global.most_total(s, stop, own_limit)

    def least_dilution(self, s: str, c: int, rate: float, stop: int) -> int | None:
        """The least number of rows without s, up to ``stop``, that release ``j`` needs outside
        every overlap so that the global composition puts no row over ``r_th`` for s with
        ``c`` copies (:meth:`GlobalComposition.least_dilution`), or ``None``."""
        self._global.refresh()
        return self._global.least_dilution(s, c, rate, stop)

    # -- published clusters --------------------------------------------------------------

    def _refresh_published(self) -> None:
        clusters = self.state.releases[self.j].clusters
        affected: set[ClusterRef] = set()
        for c, cluster in enumerate(clusters):
            seen = self._linked.get(c)
            if seen is not None and seen.matches(cluster):
                continue
            links, unsafe = self._overlaps_of(c, cluster)
            affected |= links | self._links.get(c, set())
            for ref in self._unsafe_links.get(c, set()) - unsafe:
                self._unsafe_by[ref].discard(c)
            for ref in unsafe:
                self._unsafe_by.setdefault(ref, set()).add(c)
            self._links[c], self._unsafe_links[c] = links, unsafe
            self._linked[c] = _Seen.of(cluster)
        for ref in affected:
            if self._unsafe_by.get(ref):
                self._unsafe[ref] = self._published_violations(ref)
            else:
                self._unsafe.pop(ref, None)

    def _published_violations(self, ref: ClusterRef) -> list[Violation]:
        """:meth:`_cluster_violations` of a published cluster, reused while what it reads of
        release ``j`` is the same: every other input of its formula 12 is published, so equal
        readings give the very same posteriors."""
        with_new = cluster_cover(self.state, ref, releases=(self.j,))
        reading = self._reading(ref, with_new)
        found = self._read.get(ref)
        if found is not None and found[0] == reading:
            return found[1]
        # Its cover: the overlaps with published clusters, then those with j's (j is the
        # newest release, so they sort last): the list cluster_cover gives. The published
        # part is found again rather than kept: 6,952 judgings of 6,139 published clusters
        # at release 20 of the 20 x 20,000 series, and kept it was the largest structure of
        # the peak (39 MiB).
        fixed = cluster_cover(self.state, ref, releases=range(self.j))
        violations = self._cluster_violations(ref, fixed + with_new)
        self._read[ref] = (reading, violations)
        return violations

    def _reading(self, ref: ClusterRef, with_new: list[Overlap]) -> _Reading:
        """What :func:`cluster_posteriors` of published cluster ``ref`` reads of release ``j``
        through its overlaps with ``j``'s clusters (``with_new``): the overlaps (rows, hence
        ``N(O)`` and the rows' z codes) and their ranges per term."""
        cluster = self.state.cluster(ref)
        terms = sorted(cluster.terms())
        parts = []
        for overlap in with_new:
            other = self.state.cluster(overlap.other)
            ranges = tuple(
                overlap_range(cluster.n_s(s), cluster.n, other.n_s(s), other.n, overlap.size)
                for s in terms
            )
            parts.append((overlap.other, tuple(sorted(overlap.rows.items())), ranges))
        return tuple(parts)

    def _overlaps_of(
        self, c: int, cluster: ClusterState
    ) -> tuple[set[ClusterRef], set[ClusterRef]]:
        """The published clusters cluster ``c`` of ``j`` overlaps, and those of them whose
        overlap with it is not safe."""
        links: set[ClusterRef] = set()
        unsafe: set[ClusterRef] = set()
        for overlap in cluster_cover(self.state, (self.j, c), releases=range(self.j)):
            links.add(overlap.other)
            if unsafe_overlap(cluster, self.state.cluster(overlap.other), overlap.size):
                unsafe.add(overlap.other)
        return links, unsafe

    def published_over(self) -> dict[ClusterRef, set[str]]:
        """Terms over ``r_th`` (cluster composition) per published cluster with an unsafe
        overlap, for the clusters that have some, in (release, cluster) order."""
        self._refresh_published()
        over: dict[ClusterRef, set[str]] = {}
        for ref in sorted(self._unsafe):
            terms = {v[2] for v in self._unsafe[ref]}
            if terms:
                over[ref] = terms
        return over

    # -- the new release -----------------------------------------------------------------

    def _refresh_own(self) -> None:
        release = self.state.releases[self.j]
        if release.rates != self._rates:
            self._judged.clear()
            self._rates = dict(release.rates)
        for c, cluster in enumerate(release.clusters):
            seen = self._judged.get(c)
            if seen is None or not seen.matches(cluster):
                self._own[c] = self._cluster_violations((self.j, c))
                self._judged[c] = _Seen.of(cluster)

    def _cluster_violations(
        self, ref: ClusterRef, cover: list[Overlap] | None = None
    ) -> list[Violation]:
        rates = self.state.releases[ref[0]].rates
        found: list[Violation] = []
        posteriors = (
            self.posteriors(ref[1])
            if ref[0] == self.j
            else cluster_posteriors(self.state, ref, cover=cover)
        )
        for row, betas in posteriors.items():
            for s, beta in betas.items():
                risk = serial_risk(beta, rates.get(s, 0.0))
                if risk > self._limit:
                    found.append((ref, row, s, risk, "cluster"))
        return found

    def cluster_violations(self, c: int) -> list[Violation]:
        """Rows of cluster ``c`` of release ``j`` over ``r_th`` through its own composition,
        as :meth:`violations` lists them, judged now (the rest of the series is not)."""
        return self._cluster_violations((self.j, c))

    # -- the whole series ----------------------------------------------------------------

    def violations(self) -> list[Violation]:
        """Rows over ``r_th``: ``(cluster, row, term, risk, composition)``.

        In the order of judging from scratch: release ``j`` (its clusters in order, then its
        global composition), then every published release (its clusters with an unsafe
        overlap with ``j``, in order, then its global composition).
        """
        self._refresh_published()
        self._refresh_own()
        self._global.refresh()
        found: list[Violation] = []
        for c in range(len(self.state.releases[self.j].clusters)):
            found.extend(self._own[c])
        found.extend(self._global_violations(self.j))
        for k in range(len(self.state.releases)):
            if k == self.j:
                continue
            for ref in sorted(ref for ref in self._unsafe if ref[0] == k):
                found.extend(self._unsafe[ref])
            found.extend(self._global_violations(k))
        return found

    def _global_violations(self, k: int) -> Iterator[Violation]:
        release = self.state.releases[k]
        over = self._global.over(k)
        if not over:
            return
        pattern_of = self._global.pattern_of(k)
        for c, cluster in enumerate(release.clusters):
            for row in cluster.counts:
                for s, risk in over.get(pattern_of[row], ()):
                    yield ((k, c), row, s, risk, "global")

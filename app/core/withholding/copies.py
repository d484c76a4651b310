"""Where each true copy of a private term of the new release sits (design.md §5.8).

A copy of s held by a row of cluster ``C`` is published in ``C``'s private segment ``C_c``, or
in the release's global bag ``C_g`` (somewhere in the release), or nowhere (suppressed). Anony's
refining (design.md §2.4) also moves bag copies into segments of clusters with room, in a
secret random order that does not depend on which clusters held them (anti-minimality): a
segment may hold such *placed* copies beside its own. Nothing else moves a copy into a segment
but its own cluster's, so the release's totals are never above the true ones and no copy is
ever made up. :class:`Copies` keeps that ledger for the new release and moves copies:

- ``own[c][s]``: copies of s held by the true rows of cluster ``c``;
- ``own_in_segment[c][s] <= own[c][s]`` and ``placed[c][s]``: the segment's two parts;
- ``suppressed[c][s]``: copies of ``c``'s rows published nowhere;
- the bag holds the rest: ``sum(own - own_in_segment - suppressed) = bag + sum(placed)``.

The global share ``N(s, C_ol) = J_s(C)`` (formula 3) is the bag's share of each cluster, part
of what a cluster publishes; it follows the bag, rounded half to even, never above what the
repair last lowered it to (:meth:`Copies.cap_share`), nor above what keeps ``γ_s(C)`` within
Anony's threshold (formula 4), and is 0 in a copy-free cluster. Shares are brought up to date
by :meth:`Copies.settle`, once per batch of moves (a release of 20,000 rows moves thousands of
copies to the bag at once, and each share is a pass over the clusters).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from app.core.risk.state import ReleaseState

__all__ = ["Copies"]


class Copies:
    """The true copies of a release by cluster, and where each one is published."""

    def __init__(
        self, release: ReleaseState, true_counts: Sequence[Counter[str]], threshold: float
    ) -> None:
        """``true_counts[c][s]``: copies of s held by the true rows of cluster ``c``. The
        release's segments and bag must hold the copies as Anony left them. ``threshold``:
        Anony's, which a recomputed share keeps ``γ_s(C)`` within (formula 4)."""
        self.release = release
        self.threshold = threshold
        self.own = [Counter(t) for t in true_counts]
        self.own_in_segment: list[Counter[str]] = []
        self.placed: list[Counter[str]] = []
        #: Clusters whose rows hold copies of each term.
        self._owners: dict[str, set[int]] = {}
        unpublished: Counter[str] = Counter()
        published: Counter[str] = Counter(release.global_bag)
        for c, (cluster, own) in enumerate(zip(release.clusters, self.own, strict=True)):
            segment = cluster.private_counts
            inside = Counter({s: min(k, own[s]) for s, k in segment.items()})
            self.own_in_segment.append(inside)
            self.placed.append(Counter({s: k - own[s] for s, k in segment.items() if k > own[s]}))
            unpublished.update(own)
            unpublished.subtract(inside)
            published.update(self.placed[c])
            for s in own:
                self._owners.setdefault(s, set()).add(c)
        if +unpublished != +published:
            raise ValueError("the copies in the release are not its rows' copies")
        self.suppressed: list[Counter[str]] = [Counter() for _ in release.clusters]
        #: Copies each term has in the release (true) and publishes (segments and bag).
        self._true: Counter[str] = Counter()
        for own in self.own:
            self._true.update(own)
        self._published: Counter[str] = Counter(self._true)
        #: The lowest global share the repair gave each (cluster, term).
        self._share_cap: dict[tuple[int, str], int] = {}
        #: Clusters that publish no copy: no segment, every global share 0.
        self.empty: set[int] = set()
        #: Clusters holding a global share of each term, and terms whose shares are stale.
        self._sharing: dict[str, set[int]] = {}
        for c, cluster in enumerate(release.clusters):
            for s in cluster.global_share:
                self._sharing.setdefault(s, set()).add(c)
        self._stale: set[str] = set()
        self._n_rows = release.n

    # -- what is where -------------------------------------------------------------------

    def total(self, s: str) -> int:
        """Copies of s the release holds truly (published or not)."""
        return self._true[s]

    def terms(self) -> set[str]:
        return {s for s, k in self._true.items() if k}

    def _unpublished(self, c: int, s: str) -> int:
        """Copies of cluster ``c``'s rows outside its segment and not suppressed."""
        return self.own[c][s] - self.own_in_segment[c][s] - self.suppressed[c][s]

    def suppressed_total(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for taken in self.suppressed:
            total.update(taken)
        return total

    def share(self, c: int, s: str) -> int:
        return self.release.clusters[c].global_share.get(s, 0)

    # -- moves ---------------------------------------------------------------------------

    def to_bag(self, c: int, s: str) -> bool:
        """One copy of s from cluster ``c``'s segment to the bag (a placed one first);
        ``False`` when the segment has none."""
        if self.placed[c][s] > 0:
            _take(self.placed[c], s)
        elif self.own_in_segment[c][s] > 0:
            _take(self.own_in_segment[c], s)
        else:
            return False
        _take(self.release.clusters[c].private_counts, s)
        self.release.global_bag[s] += 1
        self._stale.add(s)
        return True

    def from_bag(self, c: int, s: str) -> bool:
        """One of cluster ``c``'s own copies of s back into its segment from the bag;
        ``False`` when it has none outside its segment or the bag is empty."""
        if c in self.empty or self._unpublished(c, s) <= 0:
            return False
        if self.release.global_bag.get(s, 0) <= 0:
            return False
        _take(self.release.global_bag, s)
        self.own_in_segment[c][s] += 1
        self.release.clusters[c].private_counts[s] += 1
        self._stale.add(s)
        return True

    def suppress(self, s: str, copies: int) -> int:
        """Suppress up to ``copies`` copies of s: from the bag first, then placed copies, then
        the segments holding most. Returns the copies suppressed."""
        done = 0
        clusters = self.release.clusters
        while done < copies:
            if self.release.global_bag.get(s, 0) > 0:
                _take(self.release.global_bag, s)
                owner = self._owner_outside(s)
            elif any(self.placed[c][s] for c in range(len(clusters))):
                c = max(range(len(clusters)), key=lambda g: (self.placed[g][s], -g))
                _take(self.placed[c], s)
                _take(clusters[c].private_counts, s)
                owner = self._owner_outside(s)
            else:
                holders = [c for c in self._owners.get(s, ()) if self.own_in_segment[c][s] > 0]
                if not holders:
                    break
                owner = max(holders, key=lambda h: (self.own_in_segment[h][s], -h))
                _take(self.own_in_segment[owner], s)
                _take(clusters[owner].private_counts, s)
            self.suppressed[owner][s] += 1
            self._published[s] -= 1
            done += 1
        if done:
            self._stale.add(s)
        return done

    def _owner_outside(self, s: str) -> int:
        """The cluster with the most copies of s outside its segment (whose copy a copy
        taken from the bag, or a placed one, is)."""
        return max(self._owners[s], key=lambda c: (self._unpublished(c, s), -c))

    def empty_cluster(self, c: int) -> int:
        """Every copy in cluster ``c``'s segment to the bag and its shares held at 0; returns
        the copies moved."""
        cluster = self.release.clusters[c]
        self.empty.add(c)
        moved = 0
        for s in sorted(cluster.private_counts):
            # Every copy of s at once, where :meth:`to_bag` took them one by one (the placed
            # ones, then the cluster's own): the same counts, without a call per copy (a
            # million calls at 1,000,000 rows).
            k = self.placed[c].pop(s, 0) + self.own_in_segment[c].pop(s, 0)
            if k > 0:
                _take(cluster.private_counts, s, k)
                self.release.global_bag[s] += k
                self._stale.add(s)
                moved += k
        for s in list(cluster.global_share):
            self._sharing.get(s, set()).discard(c)
        cluster.global_share.clear()
        return moved

    def cap_share(self, c: int, s: str) -> bool:
        """Lower cluster ``c``'s global share of s by one (it stays so while the bag does not
        shrink it further); ``False`` when it is 0."""
        self.settle()
        share = self.share(c, s)
        if share <= 0:
            return False
        self._share_cap[c, s] = share - 1
        self._stale.add(s)
        return True

    def uncap_share(self, c: int, s: str) -> bool:
        """Raise a share the repair lowered by one, up to formula 3's value."""
        cap = self._share_cap.get((c, s))
        if cap is None or c in self.empty:
            return False
        before = self.share(c, s)
        self._share_cap[c, s] = cap + 1
        self._stale.add(s)
        self.settle()
        return self.share(c, s) > before

    # -- global shares -------------------------------------------------------------------

    def settle(self) -> None:
        """Bring every stale term's global shares up to date (:meth:`refresh_shares`)."""
        if self._stale:
            stale, self._stale = self._stale, set()
            self.refresh_shares(stale)

    def refresh_shares(self, terms: Iterable[str]) -> None:
        """``J_s(C) = round(N(C) · N(s, C_g) / N(T))`` (formula 3, half to even) for every
        cluster, within the caps the repair set and Anony's: ``γ_s(C)`` at most the
        threshold (formula 4, design.md §2.5). Only clusters where formula 3 is not 0 are
        computed: ``N(C) · N(s, C_g) / N(T) >= 1/2``."""
        n = self._n_rows
        clusters = self.release.clusters
        sizes = np.fromiter((cl.n for cl in clusters), dtype=np.int64, count=len(clusters))
        for s in list(terms):
            in_bag = self.release.global_bag.get(s, 0)
            total = self._published[s]
            before = self._sharing.pop(s, set())
            after: set[int] = set()
            if in_bag and n:
                for c in np.flatnonzero(2 * sizes * in_bag >= n).tolist():
                    if c in self.empty:
                        continue
                    share = self._share(c, s, in_bag, total)
                    if share > 0:
                        clusters[c].global_share[s] = share
                        after.add(c)
            for c in before - after:
                clusters[c].global_share.pop(s, None)
            if after:
                self._sharing[s] = after

    def _share(self, c: int, s: str, in_bag: int, total: int) -> int:
        cluster = self.release.clusters[c]
        n = self._n_rows
        share = round(cluster.n * in_bag / n)
        cap = self._share_cap.get((c, s))
        if cap is not None:
            share = min(share, cap)
        allowed = min(int(self.threshold * total * cluster.n / n + 1e-9), cluster.n)
        return min(share, max(allowed - cluster.private_counts.get(s, 0), 0))


def _take(counts: Counter[str], s: str, k: int = 1) -> None:
    counts[s] -= k
    if counts[s] <= 0:
        del counts[s]

"""Clusters against their covers, without counterfeits (design.md §5.8; formulas 5, 6, 12-15).

Once the totals are settled (:mod:`~app.core.withholding.totals`) the global composition no
longer moves: what is left is where the copies sit. A row over ``r_th`` through a cluster's
composition is mended by the new release alone, with true copies only:

- a row of a new cluster: one copy of s from that cluster's segment to the global bag (its
  share ``N(s, C*)`` falls), or, with no copy left in the segment, its global share lowered;
- a row of a published cluster whose overlap with a new cluster caps the copies of s there
  (the new cluster's ``f2`` below the published one's, formula 5): one of the new cluster's
  own copies back from the bag (or its lowered share raised again); where the new cluster
  forces copies into the overlap (its ``f1`` above the published one's), one of its copies
  to the bag.

These are the moves of the paper's BP (Lemma 4) and FP2 with copies the release truly holds
instead of counterfeit rows. A round makes one move per (cluster, term) over, then the series
is judged again; when a round can move nothing, or the rows over stop falling, the clustering
cannot be made safe this way and :class:`Stuck` tells the pipeline to coarsen it.
"""

from __future__ import annotations

from collections.abc import Callable

from app.core.risk.incremental import SeriesRisk, Violation
from app.core.risk.overlap import cluster_cover, s_range
from app.core.risk.state import ClusterRef, SeriesState
from app.core.withholding.copies import Copies

__all__ = ["Placement", "Stuck"]

#: Rounds without fewer rows over ``r_th`` after which the placement is judged stuck.
_STALL_ROUNDS = 8


class Stuck(Exception):
    """No move of true copies brings these rows within ``r_th`` at this clustering."""

    def __init__(self, violations: list[Violation], rounds: int) -> None:
        super().__init__(f"{len(violations)} rows over r_th after {rounds} rounds")
        self.violations = violations
        self.rounds = rounds
        #: Clusters of the release at the clustering that was stuck (set by the pipeline).
        self.clusters = 0


class Placement:
    """Moves the true copies of release ``j`` until no row of the series is over ``r_th``
    through a cluster's composition."""

    def __init__(
        self,
        state: SeriesState,
        j: int,
        copies: Copies,
        risk: SeriesRisk,
        holding: list[bool],
    ) -> None:
        #: Per cluster of ``j``: whether it may hold copies (module clustering).
        self.holding = holding
        self.state = state
        self.j = j
        self.copies = copies
        self.risk = risk
        #: Moves made, by kind: ``to_bag``, ``from_bag``, ``share_lowered``, ``share_raised``.
        self.moves: dict[str, int] = {}

    def run(self, max_rounds: int, progress: Callable[[float], None]) -> int:
        """Mend until no row is over; returns the rounds. Raises :class:`Stuck`."""
        best: tuple[int, float] | None = None
        stalled = 0
        found: list[Violation] = []
        for round_no in range(max_rounds + 1):
            progress(min(round_no / max(max_rounds, 1), 1.0))
            self.copies.settle()
            found = self.risk.violations()
            if not found:
                return round_no
            score = (len(found), max(v[3] for v in found))
            if best is None or score < best:
                best, stalled = score, 0
            else:
                stalled += 1
            if stalled >= _STALL_ROUNDS or round_no == max_rounds:
                break
            if not self._round(found):
                break
        raise Stuck(found, round_no)

    def _round(self, found: list[Violation]) -> bool:
        """One move per (cluster, term) over; ``False`` when none could be made."""
        done: set[tuple[ClusterRef, str]] = set()
        moved = False
        for ref, _row, s, _risk, kind in found:
            if kind != "cluster" or (ref, s) in done:
                continue
            done.add((ref, s))
            if ref[0] == self.j:
                moved |= self._lower(ref[1], s)
            else:
                moved |= self._mend_published(ref, s)
        return moved

    def _lower(self, c: int, s: str) -> bool:
        """Rows of new cluster ``c`` over for s: fewer copies attributed to it (segment first,
        then share) unless a published overlap needs them."""
        self.copies.settle()
        if self.state.releases[self.j].clusters[c].n_s(s) <= self._needed(c, s):
            return False
        if self.copies.to_bag(c, s):
            self._count("to_bag")
            return True
        if self.copies.cap_share(c, s):
            self._count("share_lowered")
            return True
        return False

    def _needed(self, c: int, s: str) -> int:
        """Copies of s cluster ``c`` must keep for its published overlaps' ranges to stay
        whole (Lemma 4: its ``f2`` at least each published cluster's, ``min(N(O), N(s, C*))``)."""
        needed = 0
        for overlap in cluster_cover(self.state, (self.j, c), releases=range(self.j)):
            other = self.state.cluster(overlap.other)
            needed = max(needed, min(overlap.size, other.n_s(s)))
        return needed

    def _mend_published(self, ref: ClusterRef, s: str) -> bool:
        """Widen the range of s in the overlaps of published cluster ``ref`` with the new
        release: raise the new clusters that cap it, lower those that force copies in."""
        old = self.state.cluster(ref)
        moved = False
        for overlap in cluster_cover(self.state, ref, releases=(self.j,)):
            c = overlap.other[1]
            new = self.state.cluster(overlap.other)
            f_old = s_range(old.n_s(s), old.n, overlap.size)
            f_new = s_range(new.n_s(s), new.n, overlap.size)
            if f_new[1] < f_old[1]:
                if not self.holding[c]:
                    continue
                if self.copies.from_bag(c, s):
                    self._count("from_bag")
                    moved = True
                elif self.copies.uncap_share(c, s):
                    self._count("share_raised")
                    moved = True
            elif f_new[0] > f_old[0] and self.copies.to_bag(c, s):
                self._count("to_bag")
                moved = True
        return moved

    def _count(self, kind: str) -> None:
        self.moves[kind] = self.moves.get(kind, 0) + 1

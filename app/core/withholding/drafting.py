"""True rows moved between clusters of the new release (design.md §5.8).

A row whose non-private set no other release holds, and which is the only row of the release
with that set, overlaps nothing: whichever cluster of the release it sits in, no cover gains or
loses a row by it. Such a *free* row can change cluster while the release is built, and it
carries its copies with it. That does with true rows what the paper's counterfeits do:

- a free row holding s drafted into a new cluster that caps a published cluster's copies of s
  (its ``f2`` too low, formula 5) raises the new cluster's count with a copy that exists, as
  BP's s-counterfeit would (Lemma 4);
- a free row without s drafted into a new cluster whose rows are over ``r_th`` dilutes them, as
  FP2's s̄-counterfeit would (Definition 17), or lowers its ``f1`` where it forces copies into an
  overlap.

What it costs is context: the drafted row is read with its new cluster's rows. Donors are
chosen so that the row leaves no cluster it was needed by: rows whose copy of s is in the bag
first, and never the last row of a cluster below ``cluster_size``.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.core.model import Row
from app.core.risk.state import SeriesState
from app.core.withholding.copies import Copies

__all__ = ["Drafter"]


class Drafter:
    """Finds free rows of release ``j`` and moves them between its clusters."""

    def __init__(
        self,
        state: SeriesState,
        j: int,
        copies: Copies,
        members: list[list[int]],
        private_sets: Sequence[frozenset[str]],
        min_size: int,
    ) -> None:
        """``members[c]``: the corpus positions of cluster ``c``'s rows, in its rows' order;
        ``private_sets[i]``: the private terms of corpus position ``i``."""
        self.state = state
        self.j = j
        self.copies = copies
        self.members = members
        self.private_sets = private_sets
        self.min_size = min_size
        #: Rows moved, per reason: ``with_term`` (a copy needed), ``dilution``, ``exchange``
        #: (back to a donor left short), ``dissolved`` (a short donor's rows to a neighbour).
        self.drafted: dict[str, int] = {}
        #: The cluster of each free row (by corpus position), the free rows by term, and the
        #: rows of each cluster that are not free.
        self.where: dict[int, int] = {}
        self.by_term: dict[str, set[int]] = {}
        self.bound = [0] * len(members)
        clusters = state.releases[j].clusters
        for c, positions in enumerate(members):
            for at, position in enumerate(positions):
                if self._free(clusters[c].rows[at]):
                    self.where[position] = c
                    for s in private_sets[position]:
                        self.by_term.setdefault(s, set()).add(position)
                else:
                    self.bound[c] += 1

    def _free(self, row: Row) -> bool:
        release = self.state.releases[self.j]
        if release.row_counts.get(row, 0) != 1:
            return False
        return all(ref[0] == self.j for ref in self.state.holders(row))

    def _size(self, c: int) -> int:
        return len(self.members[c])

    def _can_give(self, d: int, c: int) -> bool:
        """Cluster ``d`` can give ``c`` a row: it stays at ``cluster_size``, or all its rows
        are free and what is left of it can join another such cluster."""
        if d == c:
            return False
        return self._size(d) > self.min_size or self.bound[d] == 0

    def draft_with(self, c: int, s: str) -> bool:
        """Move into cluster ``c`` a free row holding s: one whose copy is in the bag first,
        from a cluster that can spare it, with the fewest other private terms. ``False`` when
        there is none."""
        best: tuple[tuple[int, int, int, int], int] | None = None
        for position in self.by_term.get(s, ()):
            d = self.where[position]
            if not self._can_give(d, c):
                continue
            in_bag = self.copies.own[d][s] - self.copies.own_in_segment[d][s]
            key = (
                1 if in_bag > 0 else 0,
                1 if self._size(d) > self.min_size else 0,
                -len(self.private_sets[position]),
                -position,
            )
            if best is None or key > best[0]:
                best = (key, position)
        if best is None:
            return False
        self._move(best[1], c, "with_term")
        if self.copies.own_in_segment[c][s] < self.copies.own[c][s]:
            # Its copy was in the bag: the cluster takes it into its segment.
            self.copies.from_bag(c, s)
        return True

    def draft_without(self, c: int, terms: set[str]) -> bool:
        """Move into cluster ``c`` a free row holding none of ``terms``, from the largest
        cluster that can spare one; ``False`` when there is none."""
        best: tuple[tuple[int, int], int] | None = None
        for position, d in self.where.items():
            if terms & self.private_sets[position] or not self._can_give(d, c):
                continue
            key = (self._size(d), -position)
            if best is None or key > best[0]:
                best = (key, position)
        if best is None:
            return False
        self._move(best[1], c, "dilution")
        return True

    def _move(self, position: int, c: int, reason: str) -> None:
        d = self.where[position]
        self._relocate(position, d, c)
        self.drafted[reason] = self.drafted.get(reason, 0) + 1
        if 0 < self._size(d) < self.min_size:
            self._dissolve(d, avoid=c)

    def _relocate(self, position: int, d: int, c: int) -> None:
        at = self.members[d].index(position)
        self.members[d].pop(at)
        self.members[c].append(position)
        self.state.move_row((self.j, d), at, (self.j, c))
        self.copies.move_row(d, c, self.private_sets[position])
        self.where[position] = c

    def _dissolve(self, d: int, avoid: int) -> None:
        """Cluster ``d`` (free rows only) fell short of ``cluster_size``: its rows join the
        most similar other cluster of free rows (shared terms over all terms)."""
        terms = {t for row in self.state.releases[self.j].clusters[d].rows for t in row}
        best: tuple[tuple[float, int], int] | None = None
        for e, cluster in enumerate(self.state.releases[self.j].clusters):
            if e in (d, avoid) or self.bound[e] or not self.members[e]:
                continue
            theirs = {t for row in cluster.rows for t in row}
            union = len(terms | theirs)
            key = (len(terms & theirs) / union if union else 0.0, -e)
            if best is None or key > best[0]:
                best = (key, e)
        if best is None:
            return
        e = best[1]
        for position in list(self.members[d]):
            self._relocate(position, d, e)
            self.drafted["dissolved"] = self.drafted.get("dissolved", 0) + 1
        self.copies.merge_placed(d, e)

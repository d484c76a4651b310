"""Suppression, the last resort of the post-condition (design.md §5.5).

Some rows cannot be brought to ``r_th`` by counterfeits: a private term new to the release,
absent from every earlier one, is lifted by the global composition by about ``N/(N - o)`` per
earlier release whatever is added; an overlap that pins a range cannot be widened. Then copies
of the term at fault are removed from the new release, terms with the fewest copies first, one
copy per (place, term) and round, until the post-condition holds. A publication is refused for
safety only when the copies to suppress would exceed ``max_suppression`` of the release's
private copies and of what that share of the series' copies leaves (``suppression_scope``).

Suppressed copies are removed from the data after the population rates were fixed (after FP1,
section 3.2.1), like FP2's counterfeits are added after: the published ``ss(s, T^μ)`` keep their
values, so suppression lowers the posteriors it targets without raising every other row's risk
through a smaller rate. The checked post-condition judges the result.
They are reported per term to the publisher and auditors, never in the public release.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

from app.core.model import Row
from app.core.risk.state import ClusterRef, ReleaseState, SeriesState

__all__ = ["Suppressor"]

Violation = tuple[ClusterRef, Row, str, float, str]


class Suppressor:
    """Removes copies of private terms from release ``j`` within a budget."""

    def __init__(
        self,
        state: SeriesState,
        j: int,
        max_share: float,
        floor: int = 0,
        earlier: tuple[int, int] = (0, 0),
        keep_in_bag: Mapping[str, int] | None = None,
        *,
        beyond_budget: bool = False,
    ) -> None:
        """``keep_in_bag``: copies of a term the global bag must keep (Kanony's invariant bag,
        design.md §7: suppression takes copies from clusters, or bag copies above these);
        ``earlier``: the private copies of the earlier releases and the copies they suppressed, for
        a budget over the series (``suppression_scope = "series"``, the default: the larger of the
        release's own share and what the series' share leaves); ``(0, 0)`` is the release's own
        budget (design.md §5, ``suppression_scope = "release"``). A release's copies are those it
        holds before the repair, BP's s-counterfeit copies included (as before the
        suppression-first rule; on the B1 grid they are the difference between a budget of 4 and 5
        copies, and seed 2 at the defaults needs 5).

        ``beyond_budget``: the last step of the escalation (``on_infeasible = "escalate"``)
        may suppress every copy of the release; the copies taken once the budget
        was spent are counted per term in :attr:`beyond`."""
        self.state = state
        self.j = j
        release = state.releases[j]
        copies = sum(release.totals().values())
        before, used = earlier
        own = math.floor(max_share * copies + 1e-9)
        # A share of the series so far, less what earlier releases took: the need is uneven
        # (a release meeting many new and rising terms needs several times 1% of its own
        # copies while others need none; docs/methods.md), the series' total stays bounded.
        # Never less than the release's own share, so that the series budget refuses nothing
        # the release's budget (design.md §5) would publish, even after a floor overspent it.
        allowed = max(own, math.floor(max_share * (copies + before) + 1e-9) - used)
        # The share alone gives a release of 90 private copies no budget at all at 1%, yet a
        # private term new to it (held by 1-3 rows) can only be protected by suppression: the
        # floor keeps such small releases publishable (docs/core.md, "Suppression").
        self.budget = min(copies, max(allowed, floor))
        #: What may be suppressed: the budget, or without limit past it (``beyond_budget``).
        self.limit = math.inf if beyond_budget else self.budget
        #: Copies suppressed after the budget was spent, per term (``beyond_budget`` only).
        self.beyond: Counter[str] = Counter()
        self.keep_in_bag: Mapping[str, int] = dict(keep_in_bag or {})
        self.suppressed: Counter[str] = Counter()
        #: Copies taken from each cluster's segment (position -> term -> copies).
        self.by_cluster: dict[int, Counter[str]] = {}
        #: Terms at fault whose only copies left are the ones ``keep_in_bag`` holds: a refusal
        #: names the bag's promise, not the budget.
        self.held_by_bag: set[str] = set()

    @property
    def release(self) -> ReleaseState:
        return self.state.releases[self.j]

    def suppress(self, found: Sequence[Violation]) -> bool:
        """Suppress one copy per (place, term) at fault in the new release, fewest-copies terms
        first; ``False`` when nothing can be suppressed within the budget."""
        totals = self.release.totals()
        targets: dict[tuple[int | None, str], None] = {}
        for ref, _row, s, _risk, kind in found:
            if ref[0] == self.j and totals.get(s, 0) > 0:
                place = ref[1] if kind == "cluster" else None
                targets.setdefault((place, s), None)
        if not targets:
            return False
        done = False
        for place, s in sorted(targets, key=lambda k: (totals.get(k[1], 0), k[1], k[0] or -1)):
            spent = sum(self.suppressed.values())
            if spent >= self.limit:
                break
            taken = self._remove_one(place, s)
            if taken is not False:
                if spent >= self.budget:
                    self.beyond[s] += 1
                self.suppressed[s] += 1
                if taken is not None:
                    self.by_cluster.setdefault(taken, Counter())[s] += 1
                done = True
        return done

    def _remove_one(self, place: int | None, s: str) -> int | None | bool:
        """Remove one copy of s; the cluster it came from, ``None`` for the global bag,
        ``False`` when there is none to remove."""
        release = self.release
        clusters = release.clusters
        if place is not None and clusters[place].private_counts.get(s, 0) > 0:
            _decrement(clusters[place].private_counts, s)
            return place
        spare = release.global_bag.get(s, 0) - self.keep_in_bag.get(s, 0)
        if place is not None and clusters[place].global_share.get(s, 0) > 0 and spare > 0:
            # The copies behind a global share are in the bag: one of them goes.
            clusters[place].global_share[s] -= 1
            _decrement(release.global_bag, s)
            return None
        if spare > 0:
            _decrement(release.global_bag, s)
            _clip_shares(release, s)
            return None
        holders = [c for c, cl in enumerate(clusters) if cl.private_counts.get(s, 0) > 0]
        if not holders:
            if release.global_bag.get(s, 0) > 0:
                self.held_by_bag.add(s)
            return False
        position = max(holders, key=lambda c: clusters[c].private_counts[s])
        _decrement(clusters[position].private_counts, s)
        return position


def _decrement(counts: Counter[str], s: str) -> None:
    counts[s] -= 1
    if counts[s] <= 0:
        del counts[s]


def _clip_shares(release: ReleaseState, s: str) -> None:
    """No cluster's global share may exceed the copies left in the bag."""
    left = release.global_bag.get(s, 0)
    for cluster in release.clusters:
        if cluster.global_share.get(s, 0) > left:
            if left:
                cluster.global_share[s] = left
            else:
                del cluster.global_share[s]

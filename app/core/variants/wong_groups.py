"""Anonymised groups for Wong et al.'s method: start small, merge bottom-up, suppress the rest.

The paper (section 7) leaves the anonymisation algorithm open ("we may use a bottom-up approach to
grow the anonymized groups"); design.md §6 fixes it as: groups are clusters published anatomy-style,
grown by merging the most similar groups until every (individual, private term) pair of a group
meets its required size ratio ``n_k / n_{k,s}`` (Theorem 1 and the chosen strategy), with
suppression (section 6.3) where no feasible group is found. This module implements that part;
:mod:`app.core.variants.wong` computes the required ratios and assembles the release.

Requirements are exact rationals (:class:`Need`), so that the pass/fail test
``c * num <= n * den`` never depends on floating point; the float ``value`` only steers the
merge heuristic.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

__all__ = [
    "Group",
    "GroupingOutcome",
    "Need",
    "allowed_copies",
    "cut_runs",
    "form_groups",
    "labelled_groups",
    "similarity_order",
]

#: Live groups examined on each side of a failing group in the similarity order.
MERGE_WINDOW = 3
#: A merge must cut the shortfall by at least this share of what the partner could at best
#: (``min(partner size, shortfall)``); below it, growing the group costs more utility than the
#: copies it saves, and suppression is the better distortion (decision, see docs/methods.md).
MIN_EFFICIENCY = 0.25
#: A failing group grows to at most this many times ``max(its starting size, ceil(need))``
#: for its largest failing requirement; past it, the excess copies are suppressed instead. When
#: a frequent term sits just under its requirement, merging would otherwise cascade into
#: groups of thousands (decision, see docs/methods.md).
MAX_GROWTH = 4
_EPS = 1e-9


class Need(NamedTuple):
    """A required ratio ``num / den`` (``den == 0``: infinite, no group may hold the term)."""

    num: int
    den: int
    value: float

    def exceeds(self, other: Need) -> bool:
        """``self > other``, exactly."""
        return self.num * other.den > other.num * self.den

    @property
    def infinite(self) -> bool:
        return self.den == 0


def allowed_copies(n: int, need: Need) -> int:
    """Largest ``c`` with ``n / c >= need``, i.e. ``floor(n / need)`` (0 when infinite).

    >>> allowed_copies(9, Need(9, 1, 9.0)), allowed_copies(8, Need(9, 1, 9.0))
    (1, 0)
    """
    return n * need.den // need.num


@dataclass(slots=True, eq=False)
class Group:
    """A group being built: transaction indexes, non-private term set, private copies, needs.

    ``needs`` holds, per private term, the largest requirement of a member whose statistics
    file has an entry for that term and whose requirement exceeds the base one; a term absent
    from ``needs`` requires the base ratio.
    """

    members: list[int]
    terms: set[str]
    counts: dict[str, int]
    needs: dict[str, Need]
    start: int = 0
    prev: int = -1
    next: int = -1
    alive: bool = True
    shortfall: float = 0.0

    @property
    def size(self) -> int:
        return len(self.members)


@dataclass(slots=True)
class GroupingOutcome:
    """Final groups (similarity order) with what merging and suppression did."""

    groups: list[Group]
    initial_groups: int
    merges: int
    suppressed: Counter[str] = field(default_factory=Counter)


def similarity_order(nonprivate: Sequence[frozenset[str]]) -> list[int]:
    """Transaction indexes sorted by their non-private sets (design.md §2.1 baseline).

    Each set's terms are ordered by global frequency (descending, ties by term) and the
    transactions sorted by that tuple, ties by position, so similar sets become neighbours.

    >>> similarity_order([frozenset({"b"}), frozenset({"a", "b"}), frozenset({"a"})])
    [2, 1, 0]
    """
    freq = Counter(term for terms in nonprivate for term in terms)
    keys = [tuple(sorted(terms, key=lambda t: (-freq[t], t))) for terms in nonprivate]
    return sorted(range(len(keys)), key=lambda i: (keys[i], i))


def cut_runs(order: Sequence[int], size: int) -> list[list[int]]:
    """Consecutive runs of ``size`` indexes; the last run absorbs a shorter remainder.

    >>> cut_runs([4, 3, 2, 1, 0], 2)
    [[4, 3], [2, 1, 0]]
    """
    runs = [list(order[i : i + size]) for i in range(0, len(order), size)]
    if len(runs) > 1 and len(runs[-1]) < size:
        runs[-2].extend(runs.pop())
    return runs


def labelled_groups(labels: Sequence[str], order: Sequence[int]) -> list[list[int]]:
    """The client's clusters, in the similarity order of their first member."""
    groups: dict[str, list[int]] = {}
    for index in order:
        groups.setdefault(labels[index], []).append(index)
    return list(groups.values())


def form_groups(
    runs: Sequence[Sequence[int]],
    nonprivate: Sequence[frozenset[str]],
    private: Sequence[frozenset[str]],
    member_needs: Sequence[Mapping[str, Need]],
    base: Need,
) -> GroupingOutcome:
    """Grow ``runs`` bottom-up until every group meets its ratios, then suppress the rest.

    1. Copies of a term are suppressed from a group where a member's requirement for that term
       is infinite (Theorem 1's denominator <= 0: o's budget for s is spent; merging never lowers
       a requirement, so no group holding s can be feasible for o).
    2. Each failing group, in the similarity order, is merged with the most similar (Jaccard of
       non-private term sets) of its :data:`MERGE_WINDOW` live neighbours on each side among
       those whose merge lowers the pair's total shortfall ``sum_s max(0, n_{k,s} * need_s - n_k)``
       by at least :data:`MIN_EFFICIENCY` of ``min(partner size, shortfall)``, and never with
       one that would expose a term to an infinite requirement, nor grow it past
       :data:`MAX_GROWTH` times ``max(starting size, ceil(largest failing need))``. It stops when
       it passes or no neighbour helps enough.
    3. Where a group still fails for ``s``, copies of s are suppressed down to
       ``floor(n_k / need_s)`` (section 6.3).

    Each merge removes a group, so there are fewer merges than runs; a merge moves the smaller
    group's containers into the larger one's, so the cost is about O(N log N) plus the window.
    """
    groups = [_new_group(run, nonprivate, private, member_needs, base) for run in runs]
    for i, group in enumerate(groups):
        group.prev, group.next = i - 1, (i + 1 if i + 1 < len(groups) else -1)
    outcome = GroupingOutcome(groups=[], initial_groups=len(groups), merges=0)
    for group in groups:
        _suppress_infinite(group, outcome.suppressed)
        group.shortfall = _shortfall(group.size, group.counts, group.needs, base)
    for gid in range(len(groups)):
        group = groups[gid]
        while group.alive and (need := _failing_need(group, base)) > 0:
            cap = MAX_GROWTH * max(group.start, math.ceil(need))
            other = _best_partner(groups, gid, base, cap)
            if other is None:
                break
            _absorb(groups, gid, other, base)
            outcome.merges += 1
    outcome.groups = [g for g in groups if g.alive]
    for group in outcome.groups:
        _suppress_excess(group, base, outcome.suppressed)
    return outcome


def _new_group(
    run: Sequence[int],
    nonprivate: Sequence[frozenset[str]],
    private: Sequence[frozenset[str]],
    member_needs: Sequence[Mapping[str, Need]],
    base: Need,
) -> Group:
    terms: set[str] = set()
    counts: Counter[str] = Counter()
    needs: dict[str, Need] = {}
    for index in run:
        terms.update(nonprivate[index])
        counts.update(private[index])
        _raise_needs(needs, member_needs[index], base)
    return Group(members=list(run), terms=terms, counts=dict(counts), needs=needs, start=len(run))


def _raise_needs(needs: dict[str, Need], extra: Mapping[str, Need], base: Need) -> None:
    for term, need in extra.items():
        current = needs.get(term, base)
        if need.exceeds(current):
            needs[term] = need


def _suppress_infinite(group: Group, suppressed: Counter[str]) -> None:
    # Only members' own needs can be infinite: the base (no past release) is always finite.
    for term in [s for s in group.counts if s in group.needs and group.needs[s].infinite]:
        suppressed[term] += group.counts.pop(term)


def _failing_need(group: Group, base: Need) -> float:
    """The largest requirement the group fails (exact test), 0.0 when it passes."""
    n = group.size
    worst = 0.0
    for term, c in group.counts.items():
        need = group.needs.get(term, base)
        if c * need.num > n * need.den:
            worst = max(worst, need.value)
    return worst


def _shortfall(n: int, counts: Mapping[str, int], needs: Mapping[str, Need], base: Need) -> float:
    total = 0.0
    for term, c in counts.items():
        excess = c * needs.get(term, base).value - n
        if excess > 0:
            total += excess
    return total


def _merged_shortfall(g: Group, h: Group, base: Need) -> float | None:
    """Shortfall of ``g ∪ h``; ``None`` when the merge would expose a term to an infinite need."""
    n = g.size + h.size
    total = 0.0
    for term in g.counts.keys() | h.counts.keys():
        c = g.counts.get(term, 0) + h.counts.get(term, 0)
        need = g.needs.get(term, base)
        other = h.needs.get(term, base)
        if other.exceeds(need):
            need = other
        if need.infinite:
            return None
        excess = c * need.value - n
        if excess > 0:
            total += excess
    return total


def _jaccard(a: set[str], b: set[str]) -> float:
    if len(a) > len(b):
        a, b = b, a
    inter = sum(1 for term in a if term in b)
    union = len(a) + len(b) - inter
    return 1.0 if union == 0 else inter / union


def _neighbours(groups: Sequence[Group], gid: int) -> list[tuple[int, int]]:
    """Up to MERGE_WINDOW live groups on each side, as ``(distance, index)``."""
    found: list[tuple[int, int]] = []
    for step in ("prev", "next"):
        cursor = getattr(groups[gid], step)
        for distance in range(1, MERGE_WINDOW + 1):
            if cursor < 0:
                break
            found.append((distance, cursor))
            cursor = getattr(groups[cursor], step)
    return found


def _best_partner(groups: Sequence[Group], gid: int, base: Need, cap: int) -> int | None:
    group = groups[gid]
    best: tuple[float, float, int, int] | None = None
    for distance, other in _neighbours(groups, gid):
        candidate = groups[other]
        if group.size + candidate.size > cap:
            continue
        merged = _merged_shortfall(group, candidate, base)
        if merged is None:
            continue
        gain = group.shortfall + candidate.shortfall - merged
        floor = MIN_EFFICIENCY * min(float(candidate.size), group.shortfall)
        if gain <= max(floor, _EPS * max(1.0, group.shortfall)):
            continue
        score = (_jaccard(group.terms, candidate.terms), gain, -distance, -other)
        if best is None or score > best:
            best = score
    return None if best is None else -best[3]


def _absorb(groups: list[Group], gid: int, oid: int, base: Need) -> None:
    """Merge group ``oid`` into ``gid`` (which keeps its place in the order)."""
    g, h = groups[gid], groups[oid]
    if h.size > g.size:  # keep the larger containers, move the smaller ones
        g.members, h.members = h.members, g.members
        g.terms, h.terms = h.terms, g.terms
        g.counts, h.counts = h.counts, g.counts
        g.needs, h.needs = h.needs, g.needs
    g.members.extend(h.members)
    g.start = max(g.start, h.start)
    g.terms.update(h.terms)
    for term, c in h.counts.items():
        g.counts[term] = g.counts.get(term, 0) + c
    _raise_needs(g.needs, h.needs, base)
    g.shortfall = _shortfall(g.size, g.counts, g.needs, base)
    h.alive = False
    if h.prev >= 0:
        groups[h.prev].next = h.next
    if h.next >= 0:
        groups[h.next].prev = h.prev


def _suppress_excess(group: Group, base: Need, suppressed: Counter[str]) -> None:
    for term in list(group.counts):
        keep = allowed_copies(group.size, group.needs.get(term, base))
        excess = group.counts[term] - keep
        if excess > 0:
            suppressed[term] += excess
            if keep:
                group.counts[term] = keep
            else:
                del group.counts[term]

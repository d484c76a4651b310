"""m-invariance buckets: division, balancing and assignment (Xiao & Tao 2007, section 5).

A *group* is m-unique: one row per value of its signature, each row a true transaction or a
counterfeit. Groups with the same signature make a *bucket*; the published clusters are runs
of a bucket's groups (:mod:`app.core.variants.inv`), so every cluster holds the same number of
copies of each value of its signature and every member's signature is the bucket's.

- **Division.** A persisting individual (one with a signature from an earlier release) goes to
  the bucket of its signature. One whose value has left its signature (its private set
  changed, or a term became private) is suppressed: no bucket can keep its signature
  truthfully, and m-invariance forbids a new one.
- **Balancing.** A bucket needs as many rows of each value as of its most frequent one:
  deficits are filled with new individuals of that value, then with counterfeits.
- **Assignment.** The remaining new individuals form groups of m distinct values, always
  taking the m values with the most rows left (the order that leaves the fewest behind). Rows
  left once fewer than m values remain (the set was not m-eligible: NULL is usually most of
  it) are completed with counterfeits whose values are drawn, seeded, in proportion to the
  corpus' value frequencies.
"""

from __future__ import annotations

import heapq
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from app.core.errors import PublicationFailed
from app.core.randomness import mechanism_random

__all__ = ["BALANCING", "ELIGIBILITY", "Plan", "Slot", "plan_groups"]

#: Member code of a counterfeit that completes a persisting signature (balancing).
BALANCING = -1
#: Member code of a counterfeit that completes a new group (m-eligibility).
ELIGIBILITY = -2

#: ``(value, member)``: member is a transaction position, or BALANCING / ELIGIBILITY.
Slot = tuple[str, int]

_DRAWS = 64


@dataclass(slots=True)
class Plan:
    """Groups by signature (each group one slot per value, in the signature's sorted order)."""

    buckets: dict[frozenset[str], list[list[Slot]]] = field(default_factory=dict)
    suppressed: list[int] = field(default_factory=list)
    persisting: int = 0
    fresh: int = 0

    def add(self, signature: frozenset[str], group: list[Slot]) -> None:
        self.buckets.setdefault(signature, []).append(group)


def plan_groups(
    keys: Sequence[str],
    values: Sequence[str],
    order: Sequence[int],
    signatures: Mapping[str, frozenset[str]],
    m: int,
    extra_values: Sequence[str],
    seed: str,
) -> Plan:
    """Division, balancing and assignment of one release's transactions.

    Parameters
    ----------
    keys, values:
        Individual key and sensitive value of each transaction.
    order:
        Every position once, similar non-private sets next to each other; rows are taken in
        this order so that a group's members, and a run of groups, stay alike.
    signatures:
        Signatures from earlier releases (``SeriesHistory.signatures``).
    m:
        Minimum number of distinct values of a new signature.
    extra_values:
        Values beyond the corpus' that a counterfeit may carry when the corpus has fewer than
        m distinct values (the series' single private terms).
    seed:
        Seeds the counterfeit values.
    """
    plan = Plan()
    persisting: dict[frozenset[str], dict[str, list[int]]] = {}
    fresh: dict[str, list[int]] = {}
    for i in order:
        signature = signatures.get(keys[i])
        if signature is None:
            fresh.setdefault(values[i], []).append(i)
        elif values[i] in signature:
            persisting.setdefault(signature, {}).setdefault(values[i], []).append(i)
            plan.persisting += 1
        else:
            plan.suppressed.append(i)
    plan.fresh = sum(len(rows) for rows in fresh.values())
    for rows in fresh.values():
        rows.reverse()  # taken with pop(): in ``order`` again
    _balance(plan, persisting, fresh)
    frequencies = Counter(values)
    _assign(plan, fresh, m, _ValueDraw(frequencies, extra_values, seed))
    return plan


def _balance(
    plan: Plan, persisting: dict[frozenset[str], dict[str, list[int]]], fresh: dict[str, list[int]]
) -> None:
    """Give every value of a persisting bucket as many rows as its most frequent value."""
    for signature in sorted(persisting, key=sorted):
        by_value = persisting[signature]
        depth = max(len(rows) for rows in by_value.values())
        columns: list[list[int]] = []
        ordered = sorted(signature)
        for value in ordered:
            rows = by_value.get(value, [])
            spare = fresh.get(value, [])
            while len(rows) < depth and spare:
                rows.append(spare.pop())
            columns.append(rows + [BALANCING] * (depth - len(rows)))
        # Row r of every column makes group r: the fullest value's column is all true rows,
        # so every group holds at least one true row.
        for r in range(depth):
            plan.add(
                signature, [(v, column[r]) for v, column in zip(ordered, columns, strict=True)]
            )


def _assign(plan: Plan, fresh: dict[str, list[int]], m: int, draw: _ValueDraw) -> None:
    """Groups of m distinct values from the new rows, most frequent values first."""
    heap = [(-len(rows), value) for value, rows in fresh.items() if rows]
    heapq.heapify(heap)
    while heap:
        top = [heapq.heappop(heap) for _ in range(min(m, len(heap)))]
        taken = {value for _, value in top}
        group: list[Slot] = [(value, fresh[value].pop()) for _, value in top]
        if len(top) < m:  # not m-eligible: counterfeits complete the group
            group += [(value, ELIGIBILITY) for value in draw.values(taken, m - len(top))]
        for count, value in top:
            if count + 1 < 0:
                heapq.heappush(heap, (count + 1, value))
        group.sort()
        plan.add(frozenset(value for value, _ in group), group)


class _ValueDraw:
    """Seeded draws of counterfeit values, in proportion to the corpus' value frequencies."""

    def __init__(self, frequencies: Counter[str], extra: Sequence[str], seed: str) -> None:
        self._values = sorted(frequencies)
        self._weights: list[int] = []
        total = 0
        for value in self._values:
            total += frequencies[value]
            self._weights.append(total)
        self._extra = [v for v in sorted(set(extra)) if v not in frequencies]
        self._rng: random.Random = mechanism_random(seed, "inv-values")

    def values(self, taken: set[str], count: int) -> list[str]:
        chosen: list[str] = []
        excluded = set(taken)
        for _ in range(_DRAWS):
            if len(chosen) == count:
                return chosen
            value = self._rng.choices(self._values, cum_weights=self._weights)[0]
            if value not in excluded:
                excluded.add(value)
                chosen.append(value)
        # Few values, or one dominant value the draws keep hitting: take the rest in order.
        for value in (*self._values, *self._extra):
            if len(chosen) == count:
                break
            if value not in excluded:
                excluded.add(value)
                chosen.append(value)
        if len(chosen) < count:
            raise PublicationFailed(
                f"m-invariance needs m distinct sensitive values; the corpus and the series' "
                f"private terms give only {len(excluded)}",
                {"distinct_values": len(excluded), "m": len(taken) + count},
            )
        return chosen

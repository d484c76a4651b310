"""The vertical partitioning attack, VPA (thesis 4.3.4, Algorithm 9).

VPA uses no semantics: it tries the ways to hand each record chunk's sub-records to the slots
(records) and keeps the first under which vertical partitioning of the rebuilt records gives
back the published chunks. Combinations are tried in lexicographic order of the slots (the
thesis's order: (1,2), (1,3), ... for Table 4.3), at most ``budget`` per chunk; when none
passes within the budget, the chunk is placed at random (decision: the number of combinations
grows as a multinomial in the cluster size).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import combinations, islice

from app.core.disassociation.vertical import build_chunks
from app.core.model import Row

__all__ = ["vpa_record_chunks"]

_Assignment = list[tuple[int, Row]]


def vpa_record_chunks(
    anchors: Sequence[Row],
    record_chunks: Sequence[Sequence[Row]],
    k: int,
    m: int,
    budget: int,
    rng: random.Random,
) -> list[set[str]]:
    """Terms added to each slot by VPA for the record chunks ``C_2..C_n`` (Algorithm 9).

    Examples
    --------
    Table 4.3: the first combination, records 1 and 2, passes (Table 4.11).

    >>> c1 = [("blood", "lung", "treatment"), ("cancer", "lung", "treatment"),
    ...       ("blood", "cancer", "lung"), ("blood", "cancer", "treatment")]
    >>> c2 = [("biopsy", "tumor"), ("biopsy", "tumor")]
    >>> [sorted(a) for a in vpa_record_chunks(c1, [c1, c2], 2, 2, 10, random.Random(0))]
    [['biopsy', 'tumor'], ['biopsy', 'tumor'], [], []]
    """
    current = [frozenset(a) for a in anchors]
    added: list[set[str]] = [set() for _ in anchors]
    target = [frozenset(t for s in chunk for t in s) for chunk in record_chunks[:1]]
    for chunk in record_chunks[1:]:
        target.append(frozenset(t for s in chunk for t in s))
        groups = sorted(Counter(chunk).items())
        chosen = next(
            (
                a
                for a in islice(_assignments(groups, tuple(range(len(anchors)))), budget)
                if _passes(current, a, target, k, m)
            ),
            None,
        )
        if chosen is None:
            chosen = _random_assignment(groups, len(anchors), rng)
        for slot, sub_record in chosen:
            current[slot] = current[slot] | frozenset(sub_record)
            added[slot].update(sub_record)
    return added


def _assignments(groups: Sequence[tuple[Row, int]], free: tuple[int, ...]) -> Iterator[_Assignment]:
    """Every way to give each distinct sub-record its copies' worth of distinct free slots."""
    if not groups:
        yield []
        return
    (sub_record, copies), rest = groups[0], groups[1:]
    for slots in combinations(free, copies):
        left = tuple(s for s in free if s not in slots)
        for tail in _assignments(rest, left):
            yield [(s, sub_record) for s in slots] + tail


def _passes(
    current: Sequence[frozenset[str]],
    assignment: _Assignment,
    target: Sequence[frozenset[str]],
    k: int,
    m: int,
) -> bool:
    """Whether vertical partitioning of the trial records gives the published chunks."""
    trial = list(current)
    for slot, sub_record in assignment:
        trial[slot] = trial[slot] | frozenset(sub_record)
    domain = frozenset().union(*target)
    records = [r & domain for r in trial]
    return set(build_chunks(records, domain, k, m, "shared")) == set(target)


def _random_assignment(
    groups: Sequence[tuple[Row, int]], n_slots: int, rng: random.Random
) -> _Assignment:
    slots = rng.sample(range(n_slots), min(n_slots, sum(c for _, c in groups)))
    pieces = [sub_record for sub_record, copies in groups for _ in range(copies)]
    return list(zip(slots, pieces, strict=False))

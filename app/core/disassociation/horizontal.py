"""Horizontal partitioning: clusters by the most frequent term (thesis 3.2.1, 3.3.1).

A cluster at least ``MaxClusterSize`` large is split in two by its most frequent term not
used before on its branch (the set *ignore*): the records holding it and the rest. Clusters
smaller than ``k`` are handled by one of the thesis's three strategies (Algorithms 1-3).

Decisions where the pseudocode is silent:

- ties for the most frequent term go to the smallest term, so the result is deterministic;
- a cluster that no remaining term can split (every term ignored, or all records alike) is
  kept as it is, even when larger than ``MaxClusterSize``;
- ``adding`` (Algorithm 2) merges a small cluster into the next cluster in the queue (the
  "second" entry, the first being the small cluster itself); with none left, into the last
  cluster kept so far (or it is kept alone when nothing was kept). The merged cluster ignores
  the terms either part ignored: taken literally, a small ``D1`` merged back into its sibling
  ``D2`` rebuilds their parent, which splits on the same term again, forever;
- ``remaining_list`` (Algorithm 3) partitions the list again while that makes progress; a
  list that comes back unchanged is kept as one cluster (merged into the last cluster when
  smaller than ``k``, as line 22 does).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass

from app.core.disassociation.params import DisassociationParams

__all__ = ["HorizontalPartition", "horizontal_partition", "most_frequent_term", "split_by_term"]

_Entry = tuple[list[int], frozenset[str]]


@dataclass(frozen=True, slots=True)
class HorizontalPartition:
    """Clusters as lists of corpus positions, and the positions suppressed (Algorithm 1)."""

    clusters: list[list[int]]
    suppressed: list[int]


def horizontal_partition(
    records: Sequence[frozenset[str]], params: DisassociationParams
) -> HorizontalPartition:
    """Partition ``records`` into clusters of sizes in ``[k, MaxClusterSize)`` (Algorithms 1-3).

    Parameters
    ----------
    records:
        The transactions' term sets, in corpus order.
    params:
        ``k``, ``max_cluster_size`` and the small-cluster ``strategy``.

    Returns
    -------
    HorizontalPartition
        Clusters in the order the queue saved them; suppressed positions (``suppression``).

    Examples
    --------
    Tables 3.1-3.2: with k = 2 any split of these four records leaves one record alone,
    which ``adding`` puts back with the others: one cluster of four (Table 3.2).

    >>> t = [{"cancer", "radiotherapy", "lung", "treatment"},
    ...      {"cancer", "lung", "blood", "tumor", "biopsy"},
    ...      {"cancer", "blood", "treatment", "tumor", "biopsy"},
    ...      {"vessel", "blood", "treatment", "lung", "catheterisation"}]
    >>> p = DisassociationParams(k=2, max_cluster_size=4)
    >>> horizontal_partition([frozenset(r) for r in t], p).clusters
    [[1, 2, 3, 0]]
    """
    everyone = list(range(len(records)))
    if not everyone:
        return HorizontalPartition([], [])
    if params.strategy == "remaining_list":
        return _remaining_list(records, everyone, params)
    saved: list[list[int]] = []
    small = _run_queue(records, everyone, params, saved)
    return HorizontalPartition(saved, small)


def most_frequent_term(
    records: Sequence[frozenset[str]], members: Sequence[int], ignore: frozenset[str]
) -> str | None:
    """Algorithm 1, line 12: the most frequent term of ``members`` outside ``ignore``.

    Ties go to the smallest term. (The thesis's Table 3.1 splits on *lung*, one of four
    terms of support 3; it names no rule for ties.) ``None`` when no term is left.
    """
    counts = Counter(t for i in members for t in records[i] if t not in ignore)
    if not counts:
        return None
    return min(counts, key=lambda t: (-counts[t], t))


def split_by_term(
    records: Sequence[frozenset[str]], members: Sequence[int], term: str
) -> tuple[list[int], list[int]]:
    """Algorithm 1, lines 13-14: ``D1``, the members holding ``term``, and ``D2``, the rest."""
    holding = [i for i in members if term in records[i]]
    return holding, [i for i in members if term not in records[i]]


def _split(records: Sequence[frozenset[str]], entry: _Entry) -> tuple[_Entry, _Entry] | None:
    members, ignore = entry
    x = most_frequent_term(records, members, ignore)
    if x is None:
        return None
    with_x, without = split_by_term(records, members, x)
    return (with_x, ignore | {x}), (without, ignore)


def _run_queue(
    records: Sequence[frozenset[str]],
    members: list[int],
    params: DisassociationParams,
    saved: list[list[int]],
) -> list[int]:
    """Process one queue, saving clusters into ``saved``; return the small clusters' records
    that the strategy set aside (suppressed, or the remaining list)."""
    queue: deque[_Entry] = deque([(members, frozenset())])
    aside: list[int] = []
    while queue:
        entry = queue.popleft()
        cluster = entry[0]
        if len(cluster) < params.max_cluster_size:
            if len(cluster) >= params.k:
                saved.append(cluster)
            elif params.strategy == "adding":
                _add_small(entry, queue, saved)
            else:
                aside.extend(cluster)
            continue
        halves = _split(records, entry)
        if halves is None:
            saved.append(cluster)
            continue
        queue.extend(half for half in halves if half[0])
    return aside


def _add_small(entry: _Entry, queue: deque[_Entry], saved: list[list[int]]) -> None:
    """Algorithm 2, lines 6-10: into the next queued cluster, else the last one kept."""
    cluster, small_ignore = entry
    if queue:
        members, ignore = queue[0]
        queue[0] = (members + cluster, ignore | small_ignore)
    elif saved:
        saved[-1].extend(cluster)
    else:
        saved.append(cluster)


def _remaining_list(
    records: Sequence[frozenset[str]], everyone: list[int], params: DisassociationParams
) -> HorizontalPartition:
    """Algorithm 3: partition, gather the small clusters, partition them again."""
    saved: list[list[int]] = []
    remaining = everyone
    while remaining:
        if len(remaining) < params.k:
            if saved:
                saved[-1].extend(remaining)
            else:
                saved.append(remaining)
            break
        before = sorted(remaining)
        remaining = _run_queue(records, remaining, params, saved)
        if sorted(remaining) == before:
            # No progress: the list cannot be split into clusters of k or more.
            saved.append(remaining)
            break
    return HorizontalPartition(saved, [])

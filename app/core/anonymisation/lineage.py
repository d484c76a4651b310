"""Clustering a new release with the published ones in view: cluster lineages (design.md §5).

The adversary of design.md §4 overlaps every pair of clusters of two releases on the multiset
intersection of their non-private sets. A set cut over several clusters of a release, or a new
cluster that draws its sets from many published clusters, makes many small overlaps, each read
as evidence; every one of them needs counterfeits to balance (BP, FP1, FP2). This module builds
releases the adversary cannot read twice (design.md §5.6):

- every copy of a non-private set is in one cluster of the release (:func:`whole_set_runs`), so
  each set links at most one cluster per other release;
- *lineages*: published clusters that share a set are one lineage (connected components over
  the published releases). A set that a published release holds goes to the new cluster of its
  lineage, so each new cluster overlaps the published clusters of one lineage only, about one
  per earlier release, instead of dozens (:func:`lineage_clusters`); a lineage of at least
  twice ``cluster_size`` rows that the newest release to split it held in several clusters
  is cut the same way (:func:`_split_lineage`);
- a lineage with fewer than ``cluster_size`` rows in the new corpus is filled with sets no
  release holds yet, the most similar first (frequency-rank order, as :mod:`clustering`); when
  such sets run out, small lineages are merged with their nearest neighbour in that order;
- the remaining fresh sets are cut into runs of whole sets of at least ``cluster_size`` rows.

Deterministic: every order is by term frequency, then by term, then by position.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from app.core.model import Row

__all__ = ["Lineages", "whole_set_runs", "lineage_components", "lineage_clusters"]

#: A set's sort key: its terms' frequency ranks, ascending (most frequent term first).
_Key = tuple[int, ...]


def _rank_keys(groups: Mapping[Row, Sequence[int]]) -> dict[Row, _Key]:
    """Each distinct set's key; term frequencies counted once per distinct set, weighted by
    its copies (``groups``, :func:`_positions_by_set`): the same counts as over every row,
    without a pass over every term of every row (2.9 s at 2,000,000 rows)."""
    frequency: Counter[str] = Counter()
    for row, positions in groups.items():
        copies = len(positions)
        for t in row:
            frequency[t] += copies
    ordered = sorted(frequency.items(), key=lambda kv: (-kv[1], kv[0]))
    rank = {t: i for i, (t, _) in enumerate(ordered)}
    return {row: tuple(sorted(rank[t] for t in row)) for row in groups}


def _positions_by_set(rows: Sequence[Row]) -> dict[Row, list[int]]:
    groups: dict[Row, list[int]] = {}
    for i, row in enumerate(rows):
        groups.setdefault(row, []).append(i)
    return groups


def _cut_runs(units: Sequence[list[int]], cluster_size: int) -> list[list[int]]:
    """Consecutive units (whole sets) joined until each run has ``cluster_size`` rows; a short
    last run joins the one before it."""
    runs: list[list[int]] = []
    current: list[int] = []
    for unit in units:
        current.extend(unit)
        if len(current) >= cluster_size:
            runs.append(current)
            current = []
    if current:
        if runs:
            runs[-1].extend(current)
        else:
            runs.append(current)
    return runs


def whole_set_runs(
    rows: Sequence[Row], cluster_size: int, groups: dict[Row, list[int]] | None = None
) -> list[list[int]]:
    """Frequency-ordered runs of at least ``cluster_size`` rows that never split a set.

    ``groups``, when given, is :func:`_positions_by_set` of ``rows``, already gathered.

    >>> whole_set_runs([("a",), ("b",), ("a",), ("a", "b"), ("a",)], 2)
    [[0, 2, 4], [3, 1]]
    """
    if not rows:
        return []
    groups = _positions_by_set(rows) if groups is None else groups
    keys = _rank_keys(groups)
    ordered = sorted(groups, key=lambda row: (keys[row], groups[row][0]))
    return _cut_runs([groups[row] for row in ordered], max(cluster_size, 1))


class Lineages(dict[Row, int]):
    """Lineage of every published set (a ``dict``), and the published clusters holding it:
    ``nodes[row]`` the clusters (numbered in publication order) that hold the set, oldest first;
    ``release_of[node]`` the release (0-based) of each cluster."""

    def __init__(self) -> None:
        super().__init__()
        self.nodes: dict[Row, list[int]] = {}
        self.release_of: list[int] = []


def lineage_components(published: Iterable[Iterable[Iterable[Row]]]) -> Lineages:
    """Lineage of every published set: clusters sharing a set, across and within releases,
    are one lineage (union-find). ``published`` gives, per release, each cluster's rows.

    >>> comps = lineage_components([[[("a",), ("b",)], [("c",)]], [[("b",), ("d",)]]])
    >>> comps[("a",)] == comps[("d",)] != comps[("c",)]
    True
    """
    parent: list[int] = []

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    result = Lineages()
    nodes = result.nodes
    first_cluster: dict[Row, int] = {}
    for number, release in enumerate(published):
        for rows in release:
            node = len(parent)
            parent.append(node)
            result.release_of.append(number)
            for row in rows:
                held = nodes.setdefault(row, [])
                if not held or held[-1] != node:
                    held.append(node)
                seen = first_cluster.setdefault(row, node)
                a, b = find(seen), find(node)
                if a != b:
                    parent[max(a, b)] = min(a, b)
    for row, node in first_cluster.items():
        result[row] = find(node)
    return result


def lineage_clusters(
    rows: Sequence[Row],
    lineage_of: Mapping[Row, int],
    cluster_size: int,
    groups: dict[Row, list[int]] | None = None,
) -> list[list[int]]:
    """Partition of the new corpus ``rows`` that continues the published lineages.

    ``lineage_of`` maps each published set to its lineage (:func:`lineage_components`); sets
    absent from it are fresh. Fresh sets fill the lineages short of ``cluster_size``, nearest
    in rank order first; the others form clusters of their own, which overlap nothing.
    (Spreading the surplus of fresh rows over every lineage, to dilute the rows outside the
    overlaps, was measured and changed nothing: on BMS-WebView-1 small lineages take 80% of
    the fresh rows.) Returns clusters as lists of positions into ``rows``. ``groups``, when
    given, is :func:`_positions_by_set` of ``rows``, already gathered.
    """
    size = max(cluster_size, 1)
    groups = _positions_by_set(rows) if groups is None else groups
    keys = _rank_keys(groups)
    by_lineage: dict[int, list[Row]] = {}
    fresh: list[Row] = []
    for row in groups:
        lineage = lineage_of.get(row)
        if lineage is None:
            fresh.append(row)
        else:
            by_lineage.setdefault(lineage, []).append(row)
    pool = _FreshPool(fresh, keys, groups)
    lineages: list[tuple[_Key, list[int]]] = []
    for lineage in sorted(by_lineage, key=lambda x: min(keys[r] for r in by_lineage[x])):
        sets = sorted(by_lineage[lineage], key=lambda row: (keys[row], groups[row][0]))
        members = [i for row in sets for i in groups[row]]
        if not isinstance(lineage_of, Lineages) or len(members) < 2 * size:
            lineages.append((keys[_heaviest(sets, groups)], members))
            continue
        for part in _split_lineage(sets, groups, keys, lineage_of, size):
            positions = [i for row in part for i in groups[row]]
            lineages.append((keys[_heaviest(part, groups)], positions))
    # Lineages short of cluster_size, the largest first.
    for key, members in sorted(lineages, key=lambda item: (-len(item[1]), item[0])):
        if len(members) < size:
            pool.take(key, members, size)
    clusters = [members for _, members in lineages if len(members) >= size]
    pending = sorted((item for item in lineages if len(item[1]) < size), key=lambda i: i[0])
    clusters.extend(_cut_runs([members for _, members in pending], size))
    clusters.extend(_cut_runs([groups[row] for row in pool.left()], size))
    return _absorb_short(clusters, size)


def _split_lineage(
    sets: Sequence[Row],
    groups: dict[Row, list[int]],
    keys: dict[Row, _Key],
    lineages: Lineages,
    size: int,
) -> list[list[Row]]:
    """The sets of one lineage cut by their published clusters in the newest release where they
    were apart (in two or more clusters): one new cluster would overlap each of those, every
    row outside the others' overlaps; after that release they were together, so the parts
    overlap the same clusters there. A set that release does not hold joins the part with the
    most rows in the clusters (of that release or older) that held it, else the largest; a part
    short of ``size`` rows joins the part it shares most of those clusters with.

    Why: on the 20 x 20,000 BMS-WebView-2 series, 122 of the 138 clusters
    that held counterfeits at release 16 were one lineage each, with 3,873 of its 4,065
    counterfeit rows; a lineage that an earlier release held in several clusters puts each of
    its rows outside the overlaps of the others, and the repair dilutes those rows.
    Split, the series publishes every release with about a quarter fewer counterfeit rows
    from release 12 on (docs/lab/long-series.md, "To release 20").
    """
    nodes, release_of = lineages.nodes, lineages.release_of
    held: dict[int, set[int]] = {}
    for row in sets:
        for n in nodes[row]:
            held.setdefault(release_of[n], set()).add(n)
    apart = [r for r, ns in held.items() if len(ns) > 1]
    if not apart:
        return [list(sets)]
    newest = max(apart)
    parts: dict[int, list[Row]] = {}
    rows_in: dict[int, int] = {}
    node_part: dict[int, Counter[int]] = {}

    def assign(row: Row, part: int) -> None:
        parts.setdefault(part, []).append(row)
        rows_in[part] = rows_in.get(part, 0) + len(groups[row])
        for n in nodes[row]:
            node_part.setdefault(n, Counter())[part] += len(groups[row])

    later: list[Row] = []
    for row in sets:
        there = [n for n in nodes[row] if release_of[n] == newest]
        if there:
            assign(row, there[0])
        else:
            later.append(row)
    later.sort(key=lambda row: (keys[row], groups[row][0]))
    for row in later:
        score: Counter[int] = Counter()
        for n in nodes[row]:
            if release_of[n] <= newest:
                score.update(node_part.get(n, {}))
        if score:
            best = max(score, key=lambda p: (score[p], -p))
        else:
            best = max(rows_in, key=lambda p: (rows_in[p], -p))
        assign(row, best)
    while len(parts) > 1:
        short = [p for p in parts if rows_in[p] < size]
        if not short:
            break
        p = min(short, key=lambda q: (rows_in[q], q))
        shared: Counter[int] = Counter()
        for n in {n for row in parts[p] for n in nodes[row] if release_of[n] <= newest}:
            shared.update(node_part[n])
        del shared[p]
        others = [q for q in parts if q != p]
        q = max(others, key=lambda q: (shared[q], -rows_in[q], -q))
        for row in parts.pop(p):
            parts[q].append(row)
            for n in nodes[row]:
                node_part[n][q] += len(groups[row])
                node_part[n][p] -= len(groups[row])
        rows_in[q] += rows_in.pop(p)
    return [
        sorted(part, key=lambda row: (keys[row], groups[row][0]))
        for _, part in sorted(parts.items())
    ]


def _heaviest(sets: Sequence[Row], groups: dict[Row, list[int]]) -> Row:
    return max(sets, key=lambda row: len(groups[row]))


class _FreshPool:
    """Fresh sets (no release holds them) in rank order, taken nearest to a key first."""

    def __init__(
        self, fresh: list[Row], keys: dict[Row, _Key], groups: dict[Row, list[int]]
    ) -> None:
        self._sets = sorted(fresh, key=lambda row: (keys[row], groups[row][0]))
        self._keys = [keys[row] for row in self._sets]
        self._groups = groups
        self._used = [False] * len(self._sets)
        self.rows_left = sum(len(groups[row]) for row in fresh)

    def take(self, key: _Key, members: list[int], target: int) -> None:
        """Add whole fresh sets to ``members`` until it has ``target`` rows or none is left."""
        at = bisect.bisect_left(self._keys, key)
        left, right = at - 1, at
        while len(members) < target and self.rows_left:
            while left >= 0 and self._used[left]:
                left -= 1
            while right < len(self._sets) and self._used[right]:
                right += 1
            take_right = right < len(self._sets) and (
                left < 0 or _closer(self._keys[right], self._keys[left], key)
            )
            pick = right if take_right else left
            if pick < 0:
                break
            self._used[pick] = True
            positions = self._groups[self._sets[pick]]
            self.rows_left -= len(positions)
            members.extend(positions)

    def left(self) -> list[Row]:
        return [row for row, used in zip(self._sets, self._used, strict=True) if not used]


def _closer(a: _Key, b: _Key, target: _Key) -> bool:
    """Whether ``a`` shares at least as long a prefix with ``target`` as ``b`` does."""
    return _prefix(a, target) >= _prefix(b, target)


def _prefix(a: _Key, b: _Key) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _absorb_short(clusters: list[list[int]], size: int) -> list[list[int]]:
    """A cluster still short of ``size`` (only possible when the whole corpus is) joins the
    smallest other cluster."""
    short = [c for c in clusters if len(c) < size]
    if not short or len(clusters) == 1:
        return clusters
    kept = [c for c in clusters if len(c) >= size]
    if not kept:
        merged = [i for c in short for i in c]
        return [merged]
    for c in short:
        min(kept, key=len).extend(c)
    return kept

"""Partitioning a corpus into clusters of similar transactions (design.md §2.1)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from app.core.model import Row, Transaction

__all__ = ["frequency_order_clusters", "label_clusters", "partition"]


def frequency_order_clusters(rows: Sequence[Row], cluster_size: int) -> list[list[int]]:
    """Partition row positions into runs of ``cluster_size`` similar rows, in O(N log N).

    Each non-private set's terms are ordered by global frequency (descending, ties by term),
    transactions are sorted by that tuple, and consecutive runs are cut; the last cluster
    absorbs a remainder shorter than ``cluster_size``. Identical sets become neighbours, and
    sets sharing their most frequent terms stay close, which keeps clusters' Jaccard
    similarity high. Deterministic: ties are broken by position.

    >>> frequency_order_clusters([("b",), ("a",), ("a", "b"), ("a",)], 2)
    [[1, 3], [2, 0]]
    """
    if not rows:
        return []
    frequency: Counter[str] = Counter(t for row in rows for t in row)
    rank = {
        t: i for i, (t, _) in enumerate(sorted(frequency.items(), key=lambda kv: (-kv[1], kv[0])))
    }
    keys = [tuple(sorted(rank[t] for t in row)) for row in rows]
    order = sorted(range(len(rows)), key=lambda i: (keys[i], i))
    size = max(cluster_size, 1)
    clusters = [order[i : i + size] for i in range(0, len(order), size)]
    if len(clusters) > 1 and len(clusters[-1]) < size:
        clusters[-2].extend(clusters.pop())
    return clusters


def label_clusters(labels: Sequence[str]) -> list[list[int]]:
    """The client's partition: positions grouped by label, in order of first appearance.

    >>> label_clusters(["g2", "g1", "g2"])
    [[0, 2], [1]]
    """
    groups: dict[str, list[int]] = {}
    for i, label in enumerate(labels):
        groups.setdefault(label, []).append(i)
    return list(groups.values())


def partition(
    corpus: Sequence[Transaction], rows: Sequence[Row], cluster_size: int
) -> list[list[int]]:
    """The client's partition when the corpus carries ``cluster`` labels (all or none, see
    :mod:`app.core.validation`), else :func:`frequency_order_clusters` of the rows."""
    if corpus and corpus[0].cluster is not None:
        return label_clusters([t.cluster or "" for t in corpus])
    return frequency_order_clusters(rows, cluster_size)

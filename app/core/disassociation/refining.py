"""Refining: joint clusters with shared chunks (thesis 3.2.3, Tables 3.5-3.6).

A term left in the term chunks of two adjacent clusters may have support ``k`` over both
(Table 3.5: *catheterisation*, once in P1 and once in P2). Refining joins the two clusters
and publishes such terms in a shared chunk over their records, k^m-anonymous like any record
chunk, instead of in both term chunks.

Decisions: joint clusters join two adjacent clusters (in the order horizontal partitioning
saved them), each cluster at most one joint cluster, scanned left to right; the candidates
are the terms in both term chunks; shared chunks are built by the same greedy rule as record
chunks (:func:`~app.core.disassociation.vertical.build_chunks`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from app.core.disassociation.model import Chunk, JointCluster
from app.core.disassociation.params import VerticalMethod
from app.core.disassociation.vertical import build_chunks

__all__ = ["refine"]


def refine(
    records: Sequence[Sequence[frozenset[str]]],
    term_chunks: Sequence[frozenset[str]],
    k: int,
    m: int,
    method: VerticalMethod = "shared",
) -> tuple[list[JointCluster], list[frozenset[str]]]:
    """Joint clusters and the term chunks that remain after refining.

    Parameters
    ----------
    records:
        Per cluster, its records.
    term_chunks:
        Per cluster, its term chunk ``C_T`` after vertical partitioning.
    k, m:
        k^m-anonymity of the shared chunks.
    method:
        The k^m check (:data:`~app.core.disassociation.params.VerticalMethod`).

    Examples
    --------
    Tables 3.5-3.6: *catheterisation* moves from both term chunks to a shared chunk.

    >>> p1 = [frozenset({"vessel", "catheterisation"}), frozenset({"lung"})]
    >>> p2 = [frozenset({"kidney", "catheterisation"}), frozenset({"sepsis"})]
    >>> joints, left = refine([p1, p2], [frozenset({"vessel", "catheterisation"}),
    ...                                  frozenset({"catheterisation", "sepsis"})], 2, 2)
    >>> [sorted(c.terms) for c in joints[0].shared_chunks], [sorted(t) for t in left]
    ([['catheterisation']], [['vessel'], ['sepsis']])
    """
    left = list(term_chunks)
    joints: list[JointCluster] = []
    i = 0
    while i + 1 < len(left):
        chunks = _shared_chunks([*records[i], *records[i + 1]], left[i] & left[i + 1], k, m, method)
        if not chunks:
            i += 1
            continue
        joints.append(JointCluster((i, i + 1), tuple(chunks)))
        placed = frozenset().union(*(c.terms for c in chunks))
        left[i] -= placed
        left[i + 1] -= placed
        i += 2
    return joints, left


def _shared_chunks(
    joint: list[frozenset[str]],
    candidates: frozenset[str],
    k: int,
    m: int,
    method: VerticalMethod,
) -> list[Chunk]:
    if not candidates:
        return []
    projected = [r & candidates for r in joint]
    support = Counter(t for r in projected for t in r)
    eligible = [t for t in candidates if support[t] >= k]
    return [
        Chunk(terms, tuple(r & terms for r in joint))
        for terms in build_chunks(projected, eligible, k, m, method)
    ]

"""Disassociation of a corpus: horizontal, vertical partitioning and refining (thesis 3.2)."""

from __future__ import annotations

from collections.abc import Sequence

from app.core.disassociation.horizontal import HorizontalPartition, horizontal_partition
from app.core.disassociation.model import (
    Chunk,
    DisassociatedCluster,
    Disassociation,
    JointCluster,
)
from app.core.disassociation.params import DisassociationParams
from app.core.disassociation.refining import refine
from app.core.disassociation.vertical import vertical_partition
from app.core.model import Transaction

__all__ = ["disassociate"]


def disassociate(
    corpus: Sequence[Transaction],
    params: DisassociationParams | None = None,
    partition: Sequence[Sequence[int]] | None = None,
) -> Disassociation:
    """Disassociate ``corpus`` into k^m-anonymous chunks (thesis chapter 3, Definition 2).

    Parameters
    ----------
    corpus:
        The transactions (their ``terms``; individuals and labels are ignored).
    params:
        ``k`` (default 5), ``m`` (2), ``max_cluster_size`` (25), small-cluster ``strategy``
        (``adding``), k^m check (``vertical``), ``refine``.

    Returns
    -------
    Disassociation
        Clusters with record chunks and term chunk, joint clusters with shared chunks, the
        suppressed positions; ``.public()`` is the release, ``.public().to_json()`` its layout.
    partition:
        The client's clusters (lists of corpus positions), as Anony accepts one (design.md §2.1);
        ``None``: horizontal partitioning (Algorithms 1-3).

    Examples
    --------
    Table 3.2 with k = m = 2 (Table 3.3):

    >>> corpus = [Transaction.of(t) for t in (
    ...     ["cancer", "radiotherapy", "lung", "treatment"],
    ...     ["cancer", "lung", "blood", "tumor", "biopsy"],
    ...     ["cancer", "blood", "treatment", "tumor", "biopsy"],
    ...     ["vessel", "blood", "treatment", "lung", "catheterisation"])]
    >>> release = disassociate(corpus, DisassociationParams(k=2, m=2)).public()
    >>> [list(chunk) for chunk in release.clusters[0].record_chunks][1]
    [('biopsy', 'tumor'), ('biopsy', 'tumor')]
    >>> release.clusters[0].term_chunk
    ('catheterisation', 'radiotherapy', 'vessel')
    """
    params = params or DisassociationParams()
    records = [t.terms for t in corpus]
    if partition is None:
        horizontal = horizontal_partition(records, params)
    else:
        horizontal = HorizontalPartition([list(members) for members in partition], [])
    per_cluster = [[records[i] for i in members] for members in horizontal.clusters]
    parts = [vertical_partition(r, params.k, params.m, params.vertical) for r in per_cluster]
    term_chunks = [term_chunk for _, term_chunk in parts]
    joints: list[JointCluster] = []
    if params.refine:
        joints, term_chunks = refine(per_cluster, term_chunks, params.k, params.m, params.vertical)
    clusters = tuple(
        DisassociatedCluster(
            members=tuple(members),
            record_chunks=tuple(Chunk(c, tuple(r & c for r in recs)) for c in chunk_terms),
            term_chunk=term_chunk,
        )
        for members, recs, (chunk_terms, _), term_chunk in zip(
            horizontal.clusters, per_cluster, parts, term_chunks, strict=True
        )
    )
    return Disassociation(params, clusters, tuple(joints), tuple(horizontal.suppressed))

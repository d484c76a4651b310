"""Disassociation (design.md §11; thesis chapter 3): k^m-anonymity by chunks, not by rows.

Modules, one concept each:

- :mod:`~app.core.disassociation.params`: ``k``, ``m``, ``max_cluster_size``, strategies.
- :mod:`~app.core.disassociation.horizontal`: clusters by the most frequent term
  (Algorithms 1-3: ``suppression``, ``adding``, ``remaining_list``).
- :mod:`~app.core.disassociation.vertical`: k^m-anonymous record chunks and the term chunk.
- :mod:`~app.core.disassociation.refining`: joint clusters and shared chunks.
- :mod:`~app.core.disassociation.model`: the typed result and its public JSON layout.
- :mod:`~app.core.disassociation.loss`: ``tlost``.
- :mod:`~app.core.disassociation.publish`: the method of a series (:mod:`app.methods`).
"""

from app.core.disassociation.disassociate import disassociate
from app.core.disassociation.horizontal import (
    HorizontalPartition,
    horizontal_partition,
    most_frequent_term,
    split_by_term,
)
from app.core.disassociation.loss import tlost
from app.core.disassociation.model import (
    Chunk,
    DisassociatedCluster,
    DisassociatedRelease,
    Disassociation,
    JointCluster,
    PublicCluster,
    PublicJointCluster,
)
from app.core.disassociation.params import DisassociationParams, Strategy, VerticalMethod
from app.core.disassociation.refining import refine
from app.core.disassociation.vertical import build_chunks, is_km_anonymous, vertical_partition

__all__ = [
    "Chunk",
    "DisassociatedCluster",
    "DisassociatedRelease",
    "Disassociation",
    "DisassociationParams",
    "HorizontalPartition",
    "JointCluster",
    "PublicCluster",
    "PublicJointCluster",
    "Strategy",
    "VerticalMethod",
    "build_chunks",
    "disassociate",
    "horizontal_partition",
    "is_km_anonymous",
    "most_frequent_term",
    "refine",
    "split_by_term",
    "tlost",
    "vertical_partition",
]

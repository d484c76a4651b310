"""Disassociated data (Definition 2): the publisher's typed result and its public view.

The result keeps, per cluster, the corpus positions of its records and every chunk's
sub-records aligned with them: the ground truth an auditor scores an attack against. The
public view (:class:`DisassociatedRelease`) drops that alignment: each chunk publishes its
non-empty sub-records as a sorted list, so nothing links sub-records of one record across
chunks, and the term chunk publishes its terms without their counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.core.disassociation.params import DisassociationParams
from app.core.model import Row, make_row

__all__ = [
    "Chunk",
    "Disassociation",
    "DisassociatedCluster",
    "DisassociatedRelease",
    "JointCluster",
    "PublicCluster",
    "PublicJointCluster",
]


@dataclass(frozen=True, slots=True)
class Chunk:
    """A record chunk or shared chunk: its terms and one sub-record per record (maybe empty),
    aligned with the records of its cluster (or joint cluster)."""

    terms: frozenset[str]
    subrecords: tuple[frozenset[str], ...]

    def published(self) -> tuple[Row, ...]:
        """The chunk as published: its non-empty sub-records, sorted."""
        return tuple(sorted(make_row(s) for s in self.subrecords if s))


@dataclass(frozen=True, slots=True)
class DisassociatedCluster:
    """A cluster ``P``: its records' corpus positions, record chunks ``C_1..C_n``, term chunk
    ``C_T`` (terms of its records in no record chunk and no shared chunk)."""

    members: tuple[int, ...]
    record_chunks: tuple[Chunk, ...]
    term_chunk: frozenset[str]


@dataclass(frozen=True, slots=True)
class JointCluster:
    """Adjacent clusters joined by refining (3.2.3); shared chunks' sub-records are aligned
    with the clusters' members concatenated in order."""

    clusters: tuple[int, ...]
    shared_chunks: tuple[Chunk, ...]


@dataclass(frozen=True, slots=True)
class PublicCluster:
    """What a cluster publishes: its size, each record chunk's sub-records, its term chunk."""

    size: int
    record_chunks: tuple[tuple[Row, ...], ...]
    term_chunk: Row


@dataclass(frozen=True, slots=True)
class PublicJointCluster:
    """What a joint cluster publishes: which clusters it joins and its shared chunks."""

    clusters: tuple[int, ...]
    shared_chunks: tuple[tuple[Row, ...], ...]


@dataclass(frozen=True, slots=True)
class DisassociatedRelease:
    """The public layout of a disassociated corpus (no link between chunks)."""

    k: int
    m: int
    clusters: tuple[PublicCluster, ...]
    joint_clusters: tuple[PublicJointCluster, ...]

    @property
    def n_records(self) -> int:
        """Records the release covers: its clusters' sizes (suppressed records excluded)."""
        return sum(c.size for c in self.clusters)

    @property
    def n_clusters(self) -> int:
        return len(self.clusters)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready layout: clusters ``P1..`` with size, record chunks (lists of sub-records,
        each a sorted list of terms) and term chunk; joint clusters with shared chunks."""
        return {
            "method": "disassociation",
            "k": self.k,
            "m": self.m,
            "clusters": [
                {
                    "id": f"P{i + 1}",
                    "size": c.size,
                    "record_chunks": [[list(s) for s in chunk] for chunk in c.record_chunks],
                    "term_chunk": list(c.term_chunk),
                }
                for i, c in enumerate(self.clusters)
            ],
            "joint_clusters": [
                {
                    "clusters": [f"P{i + 1}" for i in j.clusters],
                    "shared_chunks": [[list(s) for s in chunk] for chunk in j.shared_chunks],
                }
                for j in self.joint_clusters
            ],
        }

    @classmethod
    def from_json(cls, layout: Mapping[str, Any]) -> DisassociatedRelease:
        """Read back :meth:`to_json` (what an auditor holds)."""
        ids = {c["id"]: i for i, c in enumerate(layout["clusters"])}
        return cls(
            k=int(layout["k"]),
            m=int(layout["m"]),
            clusters=tuple(
                PublicCluster(
                    int(c["size"]),
                    tuple(_rows(chunk) for chunk in c["record_chunks"]),
                    make_row(c["term_chunk"]),
                )
                for c in layout["clusters"]
            ),
            joint_clusters=tuple(
                PublicJointCluster(
                    tuple(ids[p] for p in j["clusters"]),
                    tuple(_rows(chunk) for chunk in j["shared_chunks"]),
                )
                for j in layout["joint_clusters"]
            ),
        )


def _rows(chunk: Iterable[Sequence[str]]) -> tuple[Row, ...]:
    return tuple(sorted(make_row(s) for s in chunk))


@dataclass(frozen=True, slots=True)
class Disassociation:
    """The result of :func:`~app.core.disassociation.disassociate` (Definition 2)."""

    params: DisassociationParams
    clusters: tuple[DisassociatedCluster, ...]
    joint_clusters: tuple[JointCluster, ...]
    suppressed: tuple[int, ...]

    def public(self) -> DisassociatedRelease:
        """The public release: chunks without the links between them."""
        return DisassociatedRelease(
            k=self.params.k,
            m=self.params.m,
            clusters=tuple(
                PublicCluster(
                    len(c.members),
                    tuple(chunk.published() for chunk in c.record_chunks),
                    make_row(c.term_chunk),
                )
                for c in self.clusters
            ),
            joint_clusters=tuple(
                PublicJointCluster(j.clusters, tuple(s.published() for s in j.shared_chunks))
                for j in self.joint_clusters
            ),
        )

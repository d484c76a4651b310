"""The public release of a disassociation series (docs/api.md ``GET .../releases/{release_no}``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DisassociatedClusterOut", "DisassociatedReleaseOut", "JointClusterOut", "EXAMPLE"]

SubRecord = list[str]

#: Table 3.3 of the thesis (k = m = 2), as published.
EXAMPLE: dict[str, Any] = {
    "series": "clinic-notes",
    "release_no": 1,
    "label": "2025",
    "method": "disassociation",
    "params": {
        "k": 2,
        "m": 2,
        "max_cluster_size": 25,
        "strategy": "adding",
        "vertical": "shared",
        "refine": True,
    },
    "n_records": 4,
    "k": 2,
    "m": 2,
    "joint_clusters": [],
    "clusters": [
        {
            "id": "P1",
            "size": 4,
            "record_chunks": [
                [
                    ["blood", "cancer", "lung"],
                    ["blood", "cancer", "treatment"],
                    ["blood", "lung", "treatment"],
                    ["cancer", "lung", "treatment"],
                ],
                [["biopsy", "tumor"], ["biopsy", "tumor"]],
            ],
            "term_chunk": ["catheterisation", "radiotherapy", "vessel"],
        }
    ],
}


class DisassociatedClusterOut(BaseModel):
    """A cluster ``P``: its size, its record chunks and its term chunk (Definition 2)."""

    model_config = ConfigDict(json_schema_extra={"examples": [EXAMPLE["clusters"][0]]})

    id: str = Field(description="P1, P2, ... in publication order")
    size: int = Field(description="Records of the cluster")
    record_chunks: list[list[SubRecord]] = Field(
        description="Each chunk its non-empty sub-records, sorted; every combination of up "
        "to m terms in a sub-record occurs in at least k of the chunk's "
        "sub-records (k^m-anonymity). Nothing links sub-records across chunks"
    )
    term_chunk: list[str] = Field(
        description="Terms of the cluster's records in no record chunk (no counts, no links)"
    )


class JointClusterOut(BaseModel):
    """Adjacent clusters joined by refining (thesis 3.2.3), with their shared chunks."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "clusters": ["P1", "P2"],
                    "shared_chunks": [[["blood", "treatment"], ["blood", "treatment"], ["blood"]]],
                }
            ]
        }
    )

    clusters: list[str] = Field(description="Ids of the clusters it joins")
    shared_chunks: list[list[SubRecord]] = Field(
        description="Chunks over the joined clusters' records, k^m-anonymous as record chunks"
    )


class DisassociatedReleaseOut(BaseModel):
    """A disassociated release: chunks, not rows (design.md §11).

    ``?format=ndjson``: a first line without ``clusters``, then one cluster a line.
    """

    model_config = ConfigDict(json_schema_extra={"examples": [EXAMPLE]})

    series: str
    release_no: int
    label: str | None
    method: Literal["disassociation"]
    params: dict[str, Any]
    n_records: int = Field(description="Records the clusters publish (suppressed ones not)")
    k: int
    m: int
    joint_clusters: list[JointClusterOut]
    clusters: list[DisassociatedClusterOut]

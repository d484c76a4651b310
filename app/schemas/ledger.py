"""The private side of a release (auditors, admins): which rows are counterfeits."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ClusterLedgerOut(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "cluster_id": "c1",
                    "counterfeit": [False, True],
                    "bp": 1,
                    "fp1": 0,
                    "fp2": 0,
                    "suppressed": {},
                }
            ]
        }
    )

    cluster_id: str
    counterfeit: list[bool] = Field(
        description="One flag per row of the public release's cluster, in the same order"
    )
    bp: int = Field(description="Counterfeits BP added (published in the cluster's count)")
    fp1: int = Field(description="Counterfeits FP1 added (published in the cluster's count)")
    fp2: int = Field(description="Counterfeits FP2 and the post-condition added (never published)")
    suppressed: dict[str, int] = Field(
        description="Copies of each private term suppressed from this cluster (design.md §5)"
    )


class LedgerOut(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "release_no": 2,
                    "clusters": [
                        {
                            "cluster_id": "c1",
                            "counterfeit": [False, True],
                            "bp": 1,
                            "fp1": 0,
                            "fp2": 0,
                            "suppressed": {},
                        }
                    ],
                    "global_counterfeits": 0,
                    "global_bag_counterfeits": {},
                    "suppressed": {},
                    "randomness": {"source": "secret", "secret": "9f86d081884c7d65" * 4},
                }
            ]
        }
    )

    release_no: int
    clusters: list[ClusterLedgerOut]
    global_counterfeits: int = Field(description="Counterfeit copies in the global bag")
    global_bag_counterfeits: dict[str, int] = Field(
        description="Which terms those global-bag counterfeit copies are (Kanony)"
    )
    suppressed: dict[str, int] = Field(
        description="Copies of each private term suppressed from the release, global bag "
        "included (design.md §5)"
    )
    randomness: dict[str, Any] = Field(
        default_factory=dict,
        description="Where the release's random choices came from, enough to reproduce it: "
        '{"source": "secret", "secret": hex} (drawn for the release '
        'from the CSPRNG) or {"source": "publisher_seed", "seed": n}; '
        "empty for releases published before randomness was recorded",
    )

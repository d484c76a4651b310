"""Series."""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from app.core.errors import WarningCode
from app.io.terms import PrivateMatch
from app.methods.registry import method_names
from app.schemas.terms import Term

_EXAMPLE: dict[str, Any] = {
    "name": "prison-health",
    "method": "sanony",
    "private_terms": ["HIV", "cancer", "herpes"],
    "params": {"r_th": 2, "cluster_size": 2},
}


class SeriesCreate(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [_EXAMPLE]})

    name: str = Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    method: str = Field(
        "sanony",
        description=f"One of {', '.join(method_names())}",
        json_schema_extra={"enum": list(method_names())},
    )
    private_terms: list[Term] = Field(
        min_length=1,
        max_length=10_000,
        description="At least one; each trimmed and NFC-normalised, 1-200 characters",
    )
    private_match: PrivateMatch = Field(
        "casefold",
        description="casefold: every spelling of a private term is that private term (its "
        "NFKC case fold, white space and combining accents aside, and letters of other "
        "scripts that look the same, Unicode TR39: hiv, ＨＩＶ, H IV, HİV, Cyrillic НIV); "
        "exact: its NFC spelling and the spellings that look the same (Cyrillic НIV)",
    )
    params: dict[str, Any] = Field(default_factory=dict)


class SeriesOut(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    **_EXAMPLE,
                    "private_match": "casefold",
                    "params": {
                        "r_th": 2.0,
                        "cluster_size": 2,
                        "randomness": "secret",
                        "anony_r_th": None,
                        "max_repair_rounds": 200,
                    },
                    "n_releases": 0,
                    "created_at": "2025-01-01T00:00:00Z",
                }
            ]
        }
    )

    name: str
    method: str
    private_terms: list[str]
    private_match: PrivateMatch
    params: dict[str, Any]
    n_releases: int
    created_at: dt.datetime
    warnings: list[dict[str, str]] = Field(
        default_factory=list,
        description="What makes the series' releases weaker than they could be: "
        "publisher_seed when params.seed is set (every random choice of every "
        "release then follows from it; the seed itself is never echoed)",
        examples=[[{"code": WarningCode.PUBLISHER_SEED, "message": "params.seed is set: …"}]],
    )

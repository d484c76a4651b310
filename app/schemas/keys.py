"""API keys."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["admin", "publisher", "analyst", "auditor"]


class KeyCreate(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"role": "publisher", "series": "prison-health"}]},
    )

    role: Role
    series: str | None = Field(
        None,
        max_length=200,
        description="Publishers: the one series it posts to; analysts and auditors: the one "
        "series it reads (unset: all)",
    )


class KeyOut(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "id": "3f1c2a4e-0b5d-4c1e-9a55-6d2f8e7b9c10",
                    "key": "sp_3xQ…",
                    "role": "publisher",
                    "series": "prison-health",
                }
            ]
        }
    )

    id: uuid.UUID
    key: str | None = Field(None, description="Shown once, at creation")
    role: Role
    series: str | None


class KeyInfo(BaseModel):
    """A key as listed: never its value (only its sha256 is stored)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "id": "3f1c2a4e-0b5d-4c1e-9a55-6d2f8e7b9c10",
                    "role": "auditor",
                    "series": "prison-health",
                    "created_at": "2026-01-01T00:00:00Z",
                }
            ]
        }
    )

    id: uuid.UUID
    role: Role
    series: str | None
    created_at: dt.datetime

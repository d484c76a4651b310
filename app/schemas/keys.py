"""API keys."""

from __future__ import annotations

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
    series: str | None = Field(None, max_length=200, description="Publishers: the one series")


class KeyOut(BaseModel):
    id: uuid.UUID
    key: str | None = Field(None, description="Shown once, at creation")
    role: Role
    series: str | None

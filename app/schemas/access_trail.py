"""The access trail (docs/api.md "GET /v1/access-trail")."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue

_EVENT: dict[str, JsonValue] = {
    "id": 4812,
    "at": "2026-12-01T10:15:02.481Z",
    "key_id": "3f1c2a4e-0b5d-4c1e-9a55-6d2f8e7b9c10",
    "role": "auditor",
    "action": "ledger.read",
    "series": "prison-health",
    "release_no": 2,
    "status": 200,
    "details": {},
    "requests": 1,
}


class AccessEventOut(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [_EVENT]})

    id: int
    at: dt.datetime = Field(description="When the request arrived")
    key_id: uuid.UUID | None = Field(description="The key's id (never the key); null: the CLI")
    role: str = Field(description="The key's role then (`cli` for the command line)")
    action: str = Field(description="What was done: `release.read`, `ledger.read`, …")
    series: str | None
    release_no: int | None
    status: int = Field(description="The HTTP status answered (refusals are recorded too)")
    details: dict[str, Any] = Field(
        description="What else identifies it: `key` (a key created, revoked or rotated), "
        "`new_key` (a rotation's), `job`"
    )
    requests: int = Field(
        description="Identical requests (same key, action, series, release, status) one "
        "process served within one write interval (SERIALPUB_ACCESS_TRAIL_FLUSH_SECONDS) "
        "are one event; `at` is the first one's time"
    )


class AccessTrailPage(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"events": [_EVENT], "next": "2026-12-01T10:15:02.481000+00:00/4812"}]
        }
    )

    events: list[AccessEventOut] = Field(description="Oldest first")
    next: str | None = Field(
        description="Pass as `after` for the next page; null: this was the last"
    )

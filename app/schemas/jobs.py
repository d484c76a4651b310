"""Publication jobs."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class JobOut(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{
                "id": "0b6f5c1e-9d7a-4c57-8f0e-3c1d2a9b8e71", "series": "prison-health",
                "status": "running", "phase": "fp1", "progress": 0.42, "release_no": None,
                "error": None, "created_at": "2025-01-01T00:00:00Z", "finished_at": None,
            }]
        }
    )

    id: uuid.UUID
    series: str
    status: Literal["queued", "running", "succeeded", "failed"]
    phase: str | None
    progress: float
    release_no: int | None
    error: dict[str, Any] | None
    created_at: dt.datetime
    finished_at: dt.datetime | None
    report: dict[str, Any] | None = Field(
        None, description="Auditors and admins only: the mechanism's report"
    )
    phase_seconds: dict[str, float] | None = Field(None, description="Auditors and admins only")
    suppressed: dict[str, int] | None = Field(
        None,
        description="Copies of each private term suppressed as the last resort (SPEC 5), for "
        "the publisher that posted the job, auditors and admins; never in the public release",
    )

"""API keys."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

Role = Literal["admin", "publisher", "analyst", "auditor"]

_EXPIRES = "When the key stops working (RFC 3339 with a time zone, in the future); unset: never"


class KeyCreate(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "role": "publisher",
                    "series": "prison-health",
                    "expires_at": "2027-06-30T00:00:00Z",
                }
            ]
        },
    )

    role: Role
    series: str | None = Field(
        None,
        max_length=200,
        description="Publishers: the one series it posts to; analysts and auditors: the one "
        "series it reads (unset: all)",
    )
    expires_at: AwareDatetime | None = Field(None, description=_EXPIRES)


class KeyRotate(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"grace_seconds": 86400}]},
    )

    grace_seconds: int = Field(
        86400,
        ge=0,
        le=90 * 86400,
        description="How long the old key keeps working (never past its own expiry); 0: it "
        "stops at once",
    )
    expires_at: AwareDatetime | None = Field(
        None,
        description="When the new key stops working; unset: after the old key's lifetime "
        "(created to expiry) when it had one, else never",
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
                    "expires_at": "2027-06-30T00:00:00Z",
                }
            ]
        }
    )

    id: uuid.UUID
    key: str | None = Field(None, description="Shown once, at creation")
    role: Role
    series: str | None
    expires_at: dt.datetime | None = Field(None, description="Unset: the key never expires")


class KeyRotated(KeyOut):
    """The new key of a rotation, and how long the old one keeps working."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "id": "8d0e6b7a-2c4f-4f0b-b1a3-5e9c7d2f1a64",
                    "key": "sp_Yt9…",
                    "role": "publisher",
                    "series": "prison-health",
                    "expires_at": None,
                    "replaces": "3f1c2a4e-0b5d-4c1e-9a55-6d2f8e7b9c10",
                    "replaced_key_expires_at": "2026-12-02T10:00:00Z",
                }
            ]
        }
    )

    replaces: uuid.UUID = Field(description="The old key's id")
    replaced_key_expires_at: dt.datetime = Field(
        description="The end of the old key's grace period"
    )


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
                    "expires_at": "2027-01-01T00:00:00Z",
                    "last_used_at": "2026-11-30T08:12:44Z",
                    "replaced_by": None,
                }
            ]
        }
    )

    id: uuid.UUID
    role: Role
    series: str | None
    created_at: dt.datetime
    expires_at: dt.datetime | None = Field(
        None, description="When it stops (or stopped) working; unset: never"
    )
    last_used_at: dt.datetime | None = Field(
        None,
        description="Its last request, to within SERIALPUB_ACCESS_TRAIL_FLUSH_SECONDS; "
        "unset: never used",
    )
    replaced_by: uuid.UUID | None = Field(None, description="The key a rotation replaced it by")

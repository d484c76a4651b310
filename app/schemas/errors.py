"""The error body every failure answers (docs/api.md), with an example per status."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from app.core.errors import ErrorCode


def _error(code: str, message: str, **details: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details}}


#: One example per status, shown in the OpenAPI document.
ERROR_EXAMPLES: dict[int, dict[str, Any]] = {
    400: _error(
        ErrorCode.INVALID_JSON,
        "invalid JSON at line 1, column 19: Expecting value",
        line=1,
        column=19,
    ),
    401: _error(ErrorCode.UNAUTHORIZED, "missing API key: send 'Authorization: Bearer KEY'"),
    403: _error(
        ErrorCode.FORBIDDEN,
        "role 'analyst' may not do this; it needs admin",
        role="analyst",
        required=["admin"],
    ),
    404: _error(ErrorCode.NOT_FOUND, "no series 'prison-health'", series="prison-health"),
    409: _error(ErrorCode.NAME_TAKEN, "series 'prison-health' exists", name="prison-health"),
    410: _error(
        ErrorCode.RELEASE_WITHDRAWN,
        "release 2 of series 'prison-health' was withdrawn: the 2023 snapshot was uploaded as 2024",
        series="prison-health",
        release_no=2,
        withdrawn_at="2025-02-01T09:30:00Z",
        reason="the 2023 snapshot was uploaded as 2024",
    ),
    413: _error(
        ErrorCode.PAYLOAD_TOO_LARGE,
        "the body exceeds the limit of 268435456 bytes",
        limit=268435456,
    ),
    415: _error(
        ErrorCode.UNSUPPORTED_MEDIA_TYPE,
        "content type 'application/xml' is not accepted; use "
        "one of application/json, text/plain, text/csv",
        content_type="application/xml",
        accepted=["application/json", "text/plain", "text/csv"],
    ),
    422: _error(
        ErrorCode.INVALID_CORPUS,
        "line 3: term 'HIV\\u200b' contains U+200B (ZERO WIDTH SPACE)",
        line=3,
        field="terms",
        column=4,
    ),
    503: _error(ErrorCode.NOT_READY, "database unreachable", reason="OperationalError"),
    507: _error(
        ErrorCode.STORAGE_FULL,
        "the database has no space left to store the release; nothing was stored: post it "
        "again once space is added",
        reason="disk_full",
        job="0b6f5c1e-9d7a-4c57-8f0e-3c1d2a9b8e71",
    ),
}


class ErrorDetail(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [ERROR_EXAMPLES[422]["error"]]})

    code: ErrorCode = Field(
        examples=[ErrorCode.INVALID_CORPUS],
        description="Machine-readable and stable; every value is explained in docs/api.md, "
        '"Errors"',
    )
    message: str = Field(examples=["line 3 has no terms"])
    details: dict[str, Any] = Field(default_factory=dict, examples=[{"line": 3, "field": "terms"}])


class ErrorBody(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [ERROR_EXAMPLES[422]]})

    error: ErrorDetail


def error_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` entries for the given error statuses."""
    return {code: {"model": ErrorBody} for code in codes}

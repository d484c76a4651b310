"""The error body every failure answers (API.md)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class ErrorDetail(BaseModel):
    code: str = Field(examples=["invalid_corpus"])
    message: str = Field(examples=["line 3 has no terms"])
    details: dict[str, Any] = Field(default_factory=dict, examples=[{"line": 3, "field": "terms"}])


class ErrorBody(BaseModel):
    error: ErrorDetail


def error_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` entries for the given error statuses."""
    return {code: {"model": ErrorBody} for code in codes}

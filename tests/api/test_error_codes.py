"""Every code the OpenAPI document shows is a member of the one enumeration."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from app.core.errors import ErrorCode, WarningCode
from app.errors import stored_code
from tests.support.openapi import openapi_document


def _codes(node: Any) -> Iterator[str]:
    """Every string under a ``code`` key, and in the ``examples`` of a ``code`` property."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "code" and isinstance(value, str):
                yield value
            elif key == "code" and isinstance(value, dict):
                yield from (v for v in value.get("examples", []) if isinstance(v, str))
            else:
                yield from _codes(value)
    elif isinstance(node, list):
        for item in node:
            yield from _codes(item)


def test_every_code_the_openapi_document_shows_is_a_member() -> None:
    shown = set(_codes(openapi_document()))
    known = {m.value for m in ErrorCode} | {m.value for m in WarningCode}
    assert shown, "the document shows no code: the walk is broken"
    assert shown <= known, sorted(shown - known)
    assert {"invalid_json", "name_taken", "not_ready"} <= shown


def test_a_stored_code_comes_back_as_a_member() -> None:
    assert stored_code("job_cancelled", ErrorCode.PUBLICATION_FAILED) is ErrorCode.JOB_CANCELLED
    assert stored_code(None, ErrorCode.PUBLICATION_FAILED) is ErrorCode.PUBLICATION_FAILED
    assert stored_code("gone_code", ErrorCode.INTERNAL_ERROR) is ErrorCode.INTERNAL_ERROR


def test_the_error_body_schema_enumerates_the_codes() -> None:
    # Clients generated from /openapi.json get the codes as an enum, and schemathesis checks
    # every answered code against it.
    schemas = openapi_document()["components"]["schemas"]
    assert schemas["ErrorDetail"]["properties"]["code"]["$ref"].endswith("/ErrorCode")
    assert schemas["ErrorCode"]["enum"] == [member.value for member in ErrorCode]
    assert schemas["ErrorCode"]["examples"] == ["invalid_corpus"]

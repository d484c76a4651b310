"""The OpenAPI document: request bodies read by hand, the real error body, examples everywhere.

Routes that read their body after the role check (:mod:`app.api.body`) and the release
upload declare it through ``openapi_extra``; their schemas are added here. FastAPI documents
422 as its own ``HTTPValidationError``, which the service never answers: every 422 is the
docs/api.md error body, and every operation that reads a body also documents 400 (undecodable
JSON), 413 and 415. Each response and schema carries an example.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel

from app.core.errors import ErrorCode
from app.schemas.errors import ERROR_EXAMPLES
from app.schemas.keys import KeyCreate, KeyRotate
from app.schemas.releases import ReleaseBody, WithdrawalIn
from app.schemas.series import SeriesCreate
from app.services.access_trail import AccessAction

__all__ = ["RELEASE_BODY", "install_openapi"]

_BODY_MODELS: tuple[type[BaseModel], ...] = (
    ReleaseBody,
    KeyCreate,
    KeyRotate,
    SeriesCreate,
    WithdrawalIn,
)
_ERROR_REF = {"$ref": "#/components/schemas/ErrorBody"}
_BODY_ERRORS = ("400", "413", "415", "422")
_DESCRIPTIONS = {
    "400": "Undecodable body (not UTF-8, not JSON, bad gzip)",
    "401": "Missing or unknown key",
    "403": "Known key, wrong role or series",
    "404": "Not found",
    "409": "Conflict",
    "410": "Gone: withdrawn",
    "413": "Body over the limit",
    "415": "Content type, charset or encoding not accepted",
    "422": "Invalid input, named in the error body",
    "503": "Not ready",
}

#: An example for every path, query and header parameter, by name.
_PARAMETER_EXAMPLES: dict[str, Any] = {
    "name": "prison-health",
    "release_no": 2,
    "job_id": "0b6f5c1e-9d7a-4c57-8f0e-3c1d2a9b8e71",
    "key_id": "3f1c2a4e-0b5d-4c1e-9a55-6d2f8e7b9c10",
    "wait": True,
    "dry_run": False,
    "label": "2024",
    "private_terms": ["mansl"],
    "idempotency-key": "prison-health-2024",
    "format": "ndjson",
    "r_th": 2.0,
    "offset": 0,
    "limit": 100,
    "individual": "p-17",
    "series": "prison-health",
    "action": "ledger.read",
    "since": "2026-12-01T00:00:00Z",
    "until": "2026-12-02T00:00:00Z",
    "after": "2026-12-01T10:15:02.481000+00:00/4812",
}

RELEASE_BODY: dict[str, Any] = {
    "required": True,
    "description": "The corpus: JSON, FIMI/SPMF lines (text/plain) or CSV, UTF-8, optionally "
    "Content-Encoding: gzip. Label and extra private terms of text formats come "
    "as query parameters.",
    "content": {
        "application/json": {
            "schema": {"$ref": "#/components/schemas/ReleaseBody"},
            "example": {
                "label": "2024",
                "private_terms": ["mansl"],
                "transactions": [
                    {"terms": ["theft", "arson", "HIV"], "individual": "p-17", "cluster": "g1"},
                    {"terms": ["theft", "arson"], "individual": "p-18", "cluster": "g1"},
                ],
            },
        },
        "text/plain": {
            "schema": {"type": "string"},
            "example": "theft arson fraud HIV\ntheft arson cancer\nvandal arson\n",
        },
        "text/csv": {
            "schema": {"type": "string"},
            "example": 'terms,individual,cluster\n"theft;arson;HIV",p-17,g1\n'
            '"theft;arson",p-18,g1\n',
        },
    },
}


def _add_body_schemas(components: dict[str, Any]) -> None:
    for model in _BODY_MODELS:
        schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
        for name, sub in schema.pop("$defs", {}).items():
            components.setdefault(name, sub)
        components[model.__name__] = schema
    components.pop("HTTPValidationError", None)
    components.pop("ValidationError", None)


def _example_of(schema: dict[str, Any], components: dict[str, Any]) -> Any:
    if "$ref" in schema:
        target = components.get(schema["$ref"].rsplit("/", 1)[-1], {})
        return (target.get("examples") or [None])[0]
    if schema.get("type") == "array" and "items" in schema:
        item = _example_of(schema["items"], components)
        return None if item is None else [item]
    return (schema.get("examples") or [schema.get("example")])[0]


def _fix_responses(operation: dict[str, Any], components: dict[str, Any]) -> None:
    responses: dict[str, Any] = operation.setdefault("responses", {})
    codes = list(responses)
    if "requestBody" in operation:
        codes += [c for c in _BODY_ERRORS if c not in codes]
    for code in codes:
        if code.startswith("2"):
            _add_example(responses[code], components)
            continue
        responses[code] = {
            "description": _DESCRIPTIONS.get(code, "Error"),
            "content": {
                "application/json": {
                    "schema": _ERROR_REF,
                    "example": ERROR_EXAMPLES.get(int(code), ERROR_EXAMPLES[422]),
                }
            },
        }


def _add_example(response: dict[str, Any], components: dict[str, Any]) -> None:
    for media in response.get("content", {}).values():
        if "example" in media or "examples" in media:
            continue
        example = _example_of(media.get("schema", {}), components)
        if example is not None:
            media["example"] = example


def install_openapi(app: FastAPI) -> None:
    """Generate the document once, with the additions above."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        schema = get_openapi(
            title=app.title, version=app.version, description=app.description, routes=app.routes
        )
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        _add_body_schemas(components)
        # The enumeration lives in the core, which knows no pydantic: its example is added here.
        components.get("ErrorCode", {}).setdefault("examples", [ErrorCode.INVALID_CORPUS.value])
        components.get("AccessAction", {}).setdefault("examples", [AccessAction.LEDGER_READ.value])
        for path in schema.get("paths", {}).values():
            for operation in path.values():
                _fix_responses(operation, components)
                for parameter in operation.get("parameters", []):
                    if parameter["name"] in _PARAMETER_EXAMPLES:
                        parameter.setdefault("example", _PARAMETER_EXAMPLES[parameter["name"]])
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]

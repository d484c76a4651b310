"""OpenAPI additions: the three request formats of a release upload, with examples."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from app.schemas.releases import ReleaseBody

__all__ = ["RELEASE_BODY", "install_openapi"]

RELEASE_BODY: dict[str, Any] = {
    "required": True,
    "description": "The corpus: JSON, FIMI/SPMF lines (text/plain) or CSV. Label and extra "
                   "private terms of text formats come as query parameters.",
    "content": {
        "application/json": {
            "schema": {"$ref": "#/components/schemas/ReleaseBody"},
            "example": {
                "label": "2024", "private_terms": ["mansl"],
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
            "example": "terms,individual,cluster\n\"theft;arson;HIV\",p-17,g1\n"
                       "\"theft;arson\",p-18,g1\n",
        },
    },
}


def install_openapi(app: FastAPI) -> None:
    """Generate the document once, adding the upload schemas the routes read by hand."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        schema = get_openapi(title=app.title, version=app.version,
                             description=app.description, routes=app.routes)
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        body = ReleaseBody.model_json_schema(ref_template="#/components/schemas/{model}")
        components.update(body.pop("$defs", {}))
        components["ReleaseBody"] = body
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]

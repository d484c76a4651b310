"""The app's OpenAPI document, built without a database (no lifespan runs)."""

from __future__ import annotations

from functools import cache
from typing import Any

__all__ = ["openapi_document", "operations"]

_METHODS = {"get", "head", "post", "put", "patch", "delete"}


@cache
def openapi_document() -> dict[str, Any]:
    from app.api.main import create_app
    from app.settings import Settings

    settings = Settings(
        DATABASE_URL="postgresql+psycopg://nobody@127.0.0.1:1/unused",
        SERIALPUB_ENV="test",
        SERIALPUB_SECRET="openapi-secret-for-hmac",
    )
    return create_app(settings).openapi()


def operations() -> set[tuple[str, str]]:
    """Every ``(METHOD, path)`` the document describes."""
    return {
        (method.upper(), path)
        for path, item in openapi_document()["paths"].items()
        for method in item
        if method in _METHODS
    }

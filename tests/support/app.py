"""An application on a test database, served to an httpx client in process (its lifespan
run: runtime, in-process worker, access trail)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx


@contextlib.asynccontextmanager
async def app_client_for(settings: Any) -> AsyncIterator[httpx.AsyncClient]:
    from app.api.main import create_app

    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://test", timeout=120
        ) as client:
            client.app = app  # type: ignore[attr-defined]
            yield client

"""The web view's HTTP tests run on the API tests' fixtures, each module on an application of
its own (its own in-process worker), started after whatever ran before it in the process.

In two full runs of the suite (one of them a clean-clone CI run) every web test of one
pytest-xdist worker answered 202 to its ``wait=true`` posts, their jobs ``queued``: the
session's application had stopped running jobs during the browser tests that ran before
them (its procrastinate worker beat last as they began, and never again). The cause is not
found; the service's side (a worker that stops is now started again, and says why) is
``app.api.main._in_process_worker``. An application per module keeps the web tests from
depending on what the tests before them did to the session's."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.api.conftest import client, session  # noqa: F401 - fixtures


@pytest.fixture(scope="module")
async def app_client(settings) -> AsyncIterator[object]:  # type: ignore[no-untyped-def]
    import httpx

    from app.api.main import create_app

    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://test", timeout=120
        ) as client:
            client.app = app  # type: ignore[attr-defined]
            yield client

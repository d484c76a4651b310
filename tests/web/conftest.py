"""The web view's HTTP tests run on the API tests' fixtures, each module on an application of
its own (its own in-process worker), started after whatever ran before it in the process.

In two full runs every web test of one pytest-xdist worker answered 202 to its ``wait=true``
posts, their jobs ``queued``: the apps of one process shared one procrastinate app, whose
connector was the last opened (``app.queue.open_queue`` now gives each runtime its own). An
application per module also keeps the web tests from depending on what earlier tests did to
the session's."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.api.conftest import client, session  # noqa: F401 - fixtures


@pytest.fixture(scope="module")
async def app_client(settings) -> AsyncIterator[object]:  # type: ignore[no-untyped-def]
    from tests.support.app import app_client_for

    async with app_client_for(settings) as http:
        yield http

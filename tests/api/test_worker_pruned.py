"""The app's worker when another worker prunes it: every worker that starts deletes the
workers whose heartbeat is older than ``SERIALPUB_STALLED_AFTER`` (procrastinate's
``prune_stalled_workers``). A pruned worker beat on (an update of no row) until it fetched a
job, which its missing row refused; it then stopped for good, and every later post stayed
``queued`` (the web view's tests, after a test that blocked its event loop, then started a
worker on the same database)."""

from __future__ import annotations

import asyncio

import httpx
import psycopg
import pytest

from app.db.embedded import libpq_url
from tests.api.conftest import ADMIN, create_key, create_series, wait_job

pytestmark = [pytest.mark.anyio, pytest.mark.db]


async def test_a_worker_another_worker_pruned_starts_again_and_runs_the_next_post(
    client: httpx.AsyncClient, database_url: str
) -> None:
    await create_series(client, params={"r_th": 2})
    publisher = await create_key(client, "publisher", "prison-health")
    async with await psycopg.AsyncConnection.connect(
        libpq_url(database_url), autocommit=True
    ) as conn:
        for _ in range(200):  # the app's in-process worker, once it has registered
            deleted = await conn.execute("DELETE FROM procrastinate_workers")
            if deleted.rowcount:
                break
            await asyncio.sleep(0.05)
        assert deleted.rowcount >= 1
    posted = await client.post(
        "/v1/series/prison-health/releases",
        content="HIV flu\ncancer flu\nflu cough\nHIV cough\n",
        headers={**publisher, "Content-Type": "text/plain"},
    )
    assert posted.status_code == 202, posted.text
    done = await wait_job(client, posted.json()["id"], ADMIN, timeout=45)
    assert done["status"] == "succeeded" and done["release_no"] == 1, done

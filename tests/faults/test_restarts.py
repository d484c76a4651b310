"""PostgreSQL restarted (``pg_ctl restart -m fast``: a failover, a minor upgrade) or stopped
while the service works: the job succeeds on its own, the next post answers 201, releases are
numbered without gaps or doubles, and a request the database cannot answer gets 503."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from app.services.renderings import clear_render_cache
from tests.faults.conftest import ADMIN, TEXT, corpus, release_numbers, setup_series, wait_status
from tests.support.database import OwnServer

pytestmark = [pytest.mark.anyio, pytest.mark.db]

URL = "/v1/series/prison-health/releases"


async def _running_in(client: httpx.AsyncClient, job_id: str, phase: str) -> None:
    for _ in range(600):
        job = (await client.get(f"/v1/jobs/{job_id}", headers=ADMIN)).json()
        if job["status"] == "running" and job["phase"] == phase:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"job never ran phase {phase}: {job}")


async def test_a_restart_while_the_job_computes_leaves_it_to_succeed(
    client: httpx.AsyncClient, own_server: OwnServer, slow_core: Callable[[float], None]
) -> None:
    publisher = await setup_series(client)
    slow_core(3.0)
    posted = await client.post(URL, content=corpus(1), headers={**publisher, **TEXT})
    assert posted.status_code == 202, posted.text
    job_id = posted.json()["id"]
    await _running_in(client, job_id, "prepare")
    await asyncio.to_thread(own_server.restart)
    done = await wait_status(client, job_id)
    assert done["status"] == "succeeded" and done["release_no"] == 1, done
    after = await client.post(f"{URL}?wait=true", content=corpus(2), headers={**publisher, **TEXT})
    assert after.status_code == 201, after.text
    assert after.json()["release"]["release_no"] == 2
    assert await release_numbers(client) == [1, 2]


async def test_a_restart_in_the_store_runs_the_store_again(
    client: httpx.AsyncClient, own_server: OwnServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The drill of the report: the server restarts while the job stores its release. The
    store's transaction is lost whole; the job stores again once the server is back, and
    says so in its attempts and interruptions. Before, the job failed for good
    (``internal_error``, "the publication failed unexpectedly", after 1 attempt)."""
    from app.db.repositories import release_store

    real = release_store.ensure_terms
    restarts: list[int] = []

    async def restart_then_store(*args: Any, **kwargs: Any) -> Any:
        # The store's first statement, where the report's job met AdminShutdown.
        if not restarts:
            restarts.append(1)
            await asyncio.to_thread(own_server.restart)
        return await real(*args, **kwargs)

    monkeypatch.setattr(release_store, "ensure_terms", restart_then_store)
    publisher = await setup_series(client)
    posted = await client.post(URL, content=corpus(1), headers={**publisher, **TEXT})
    done = await wait_status(client, posted.json()["id"])
    assert done["status"] == "succeeded" and done["release_no"] == 1, done
    # One outage per attempt; a slow restart (a loaded machine) can meet the second attempt too.
    interruptions = done["interruptions"]
    assert done["attempts"] == 1 + len(interruptions) >= 2
    assert {i["reason"] for i in interruptions} == {"database_outage"}
    assert interruptions[0]["step"] == "store" and interruptions[0]["attempt"] == 1
    after = await client.post(f"{URL}?wait=true", content=corpus(2), headers={**publisher, **TEXT})
    assert after.status_code == 201, after.text
    assert await release_numbers(client) == [1, 2]


async def test_after_a_restart_between_requests_no_dead_connection_answers(
    client: httpx.AsyncClient, own_server: OwnServer
) -> None:
    """Every pooled connection died with the restart; the next requests get fresh ones. The
    wait=true answer read its risk summary on a dead pooled connection and answered 500 for a
    release it had published."""
    publisher = await setup_series(client)
    first = await client.post(f"{URL}?wait=true", content=corpus(1), headers={**publisher, **TEXT})
    assert first.status_code == 201, first.text
    assert (await client.get(f"{URL}/1", headers=publisher)).status_code == 200
    for _ in range(2):
        await asyncio.to_thread(own_server.restart)
        clear_render_cache()  # read the stored bytes again, on the read pool
        assert (await client.get(f"{URL}/1", headers=publisher)).status_code == 200
    second = await client.post(f"{URL}?wait=true", content=corpus(2), headers={**publisher, **TEXT})
    assert second.status_code == 201, second.text
    await asyncio.to_thread(own_server.restart)
    third = await client.post(f"{URL}?wait=true", content=corpus(3), headers={**publisher, **TEXT})
    assert third.status_code == 201, third.text
    assert await release_numbers(client) == [1, 2, 3]


async def test_a_request_the_database_cannot_answer_gets_503_with_retry_after(
    client: httpx.AsyncClient, own_server: OwnServer
) -> None:
    publisher = await setup_series(client)
    await asyncio.to_thread(own_server.stop)
    try:
        for response in (
            await client.get("/v1/series/prison-health", headers=ADMIN),
            await client.post(URL, content=corpus(1), headers={**publisher, **TEXT}),
            await client.get(f"{URL}/1", headers=publisher),
        ):
            assert response.status_code == 503, response.text
            assert response.headers["Retry-After"] == "5"
            assert response.json()["error"]["code"] == "database_unavailable"
        ready = await client.get("/readyz")
        assert ready.status_code == 503 and ready.json()["error"]["code"] == "not_ready"
    finally:
        await asyncio.to_thread(own_server.start)
    assert (await client.get("/readyz")).status_code == 200
    posted = await client.post(f"{URL}?wait=true", content=corpus(1), headers={**publisher, **TEXT})
    assert posted.status_code == 201, posted.text
    assert await release_numbers(client) == [1]


async def test_a_job_waits_out_an_outage_longer_than_a_restart(
    client: httpx.AsyncClient, own_server: OwnServer, slow_core: Callable[[float], None]
) -> None:
    """The server away for 8 s while the job computes and would store: the job's store waits
    it out, and the worker (heartbeat, listener, fetch) goes on after it."""
    publisher = await setup_series(client)
    slow_core(2.0)
    posted = await client.post(URL, content=corpus(1), headers={**publisher, **TEXT})
    job_id = posted.json()["id"]
    await _running_in(client, job_id, "prepare")
    await asyncio.to_thread(own_server.stop)
    await asyncio.sleep(8)
    await asyncio.to_thread(own_server.start)
    done = await wait_status(client, job_id)
    assert done["status"] == "succeeded" and done["release_no"] == 1, done
    assert [i["reason"] for i in done["interruptions"]] == ["database_outage"]
    assert done["attempts"] == 2
    after = await client.post(f"{URL}?wait=true", content=corpus(2), headers={**publisher, **TEXT})
    assert after.status_code == 201, after.text
    assert await release_numbers(client) == [1, 2]

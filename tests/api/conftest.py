"""API test fixtures: a client on the shared app, empty tables after each test, typed helpers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine

from app.db.repositories.release_load import RELEASE_CACHE
from app.runtime import start_runtime
from app.services.renderings import clear_render_cache
from app.services.risk import clear_risk_cache
from app.settings import Settings
from tests.support.database import truncate_all

ADMIN = {"Authorization": "Bearer test-admin-token"}


async def _drain(client: httpx.AsyncClient, url: str) -> None:
    """Wait (bounded) for jobs still running, so that truncation does not race them."""
    import psycopg

    from app.db.embedded import libpq_url

    for _ in range(200):
        async with await psycopg.AsyncConnection.connect(libpq_url(url)) as conn:
            cur = await conn.execute(
                "SELECT count(*) FROM jobs WHERE status IN ('queued', 'running')"
            )
            row = await cur.fetchone()
        if not row or row[0] == 0:
            return
        await asyncio.sleep(0.05)


@pytest.fixture
async def client(
    app_client: httpx.AsyncClient, settings: Settings, database_url: str
) -> AsyncIterator[httpx.AsyncClient]:
    runtime = await start_runtime(settings)  # recreates the admin key after truncation
    await runtime.db.dispose()
    try:
        yield app_client
    finally:
        app_client.app.dependency_overrides.clear()  # type: ignore[attr-defined]
        await _drain(app_client, database_url)
        # In a thread: the app's in-process worker runs on this event loop, and a worker
        # transaction left open at this point (a job fetch) can only end if the loop goes on;
        # a blocking TRUNCATE here waited for its lock forever (seen under load).
        await asyncio.to_thread(truncate_all, database_url)
        RELEASE_CACHE.clear()
        clear_render_cache()
        clear_risk_cache()


PAPER_PARAMS: dict[str, Any] = {
    "guarantee": "paper",
    "r_th": 2,
    "cluster_size": 2,
    "seed": 7,
    "anony_r_th": 2,
    "backward": "every_overlap",
    "forward_perturbation": True,
    "align": False,
}


@pytest.fixture
def forked_compute(monkeypatch: pytest.MonkeyPatch) -> None:
    """Jobs' children forked from this process, so that they run a stand-in for the core
    that a test sets up here (the service starts them from a clean fork server)."""
    from app.jobs import compute

    monkeypatch.setattr(compute, "START_METHOD", "fork")


async def create_series(
    client: httpx.AsyncClient,
    name: str = "prison-health",
    method: str = "sanony",
    private_terms: list[str] | None = None,
    params: dict[str, Any] | None = None,
) -> dict[str, Any]:
    body = {
        "name": name,
        "method": method,
        "private_terms": ["HIV", "cancer", "herpes"] if private_terms is None else private_terms,
        # The paper's worked example runs Sanony in the paper's mode (tests/core/paper_example),
        # under its guarantee (the default, true_rows, places no counterfeit: design.md §5.8).
        "params": PAPER_PARAMS if params is None else params,
    }
    response = await client.post("/v1/series", json=body, headers=ADMIN)
    assert response.status_code == 201, response.text
    return dict(response.json())


async def create_key(
    client: httpx.AsyncClient, role: str, series: str | None = None
) -> dict[str, str]:
    response = await client.post("/v1/keys", json={"role": role, "series": series}, headers=ADMIN)
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['key']}"}


async def wait_job(
    client: httpx.AsyncClient, job_id: str, headers: dict[str, str], timeout: float = 60
) -> dict[str, Any]:
    for _ in range(int(timeout / 0.05)):
        response = await client.get(f"/v1/jobs/{job_id}", headers=headers)
        assert response.status_code == 200, response.text
        if response.json()["status"] in ("succeeded", "failed"):
            return dict(response.json())
        await asyncio.sleep(0.05)
    raise AssertionError(f"job {job_id} did not finish")


@pytest.fixture
async def session(database_url: str) -> AsyncIterator[AsyncSession]:
    """A session of its own on the test database (what a test reads or writes beside the
    service's)."""
    engine = create_async_engine(database_url)
    async with AsyncSession(engine) as session:
        yield session
    await engine.dispose()

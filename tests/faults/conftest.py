"""The service against a PostgreSQL that faults: restarted, stopped, cut off, out of space.

Each test worker starts an embedded PostgreSQL of its own (:class:`OwnServer`) that these
tests may restart and stop; the shared server of ``TEST_DATABASE_URL`` is never touched,
since other engineers' tests use it at the same time. One application runs on it (its
in-process worker too), and every table is emptied after each test, as in ``tests/api/``.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from app.db.embedded import libpq_url
from app.db.repositories.release_load import RELEASE_CACHE
from app.services.renderings import clear_render_cache
from app.services.risk import clear_risk_cache
from app.settings import Settings
from tests.support.database import OwnServer, truncate_all

ADMIN = {"Authorization": "Bearer test-admin-token"}
TEXT = {"Content-Type": "text/plain"}
CORPUS = (
    "theft arson HIV\ntheft arson\nvandal arson cancer\nabuse arson\n"
    "fraud theft\nDUI arson HIV\nfraud vandal\nabuse theft cancer\n"
)


def corpus(n: int) -> str:
    """Snapshot ``n``: the base corpus with a term of its own, so that bodies differ."""
    return CORPUS + f"theft year{n}\n"


@pytest.fixture(scope="session")
def own_server() -> Iterator[OwnServer]:
    # Not under pytest's base temporary directory: another pytest run on the machine prunes
    # its older numbered directories, this server's data included.
    data_dir = Path(tempfile.mkdtemp(prefix="serialpub-own-pg-"))
    server = OwnServer(data_dir)
    try:
        yield server
    finally:
        server.close()
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def fault_url(own_server: OwnServer) -> str:
    return own_server.database()


def fault_settings(url: str, **extra: Any) -> Settings:
    return Settings(
        DATABASE_URL=url,
        SERIALPUB_ENV="test",
        SERIALPUB_SECRET="test-secret-for-hmac",
        SERIALPUB_ADMIN_TOKEN="test-admin-token",
        SERIALPUB_WAIT_TIMEOUT=120,
        SERIALPUB_STALLED_AFTER=2,
        SERIALPUB_DB_POOL_SIZE=5,
        **extra,
    )


@contextlib.asynccontextmanager
async def serving(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """The application on ``settings``, lifespan (and in-process worker) running."""
    from app.api.main import create_app

    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://test", timeout=180
        ) as client:
            client.app = app  # type: ignore[attr-defined]
            yield client


@pytest.fixture(scope="session")
async def fault_app(fault_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with serving(fault_settings(fault_url)) as client:
        yield client


def _serve(server: OwnServer) -> None:
    """The server up and accepting connections (a failed test may have left it stopped)."""
    if not server.running():
        server.start()
    server.ready()


@pytest.fixture
async def client(
    fault_app: httpx.AsyncClient, fault_url: str, own_server: OwnServer
) -> AsyncIterator[httpx.AsyncClient]:
    from app.runtime import start_runtime

    await asyncio.to_thread(_serve, own_server)
    runtime = await start_runtime(fault_settings(fault_url))  # the admin key, after truncation
    await runtime.db.dispose()
    try:
        yield fault_app
    finally:
        fault_app.app.dependency_overrides.clear()  # type: ignore[attr-defined]
        await asyncio.to_thread(_serve, own_server)
        await _drain(fault_url)
        await asyncio.to_thread(truncate_all, fault_url)
        RELEASE_CACHE.clear()
        clear_render_cache()
        clear_risk_cache()


async def _drain(url: str) -> None:
    """Wait (bounded) for jobs still running, so that truncation does not race them."""
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
def forked_compute(monkeypatch: pytest.MonkeyPatch) -> None:
    """Jobs' children forked from this process, so that they run a stand-in for the core
    that a test sets up here (the service starts them from a clean fork server)."""
    from app.jobs import compute

    monkeypatch.setattr(compute, "START_METHOD", "fork")


@pytest.fixture
def slow_core(monkeypatch: pytest.MonkeyPatch, forked_compute: None) -> Callable[[float], None]:
    """``slow_core(seconds)``: the core takes that much longer (in the job's child)."""
    from app.core import pipeline

    real = pipeline.publish

    def slow_by(seconds: float) -> None:
        def slow(*args: Any, **kwargs: Any) -> Any:
            time.sleep(seconds)
            return real(*args, **kwargs)

        monkeypatch.setattr(pipeline, "publish", slow)

    return slow_by


async def setup_series(client: httpx.AsyncClient, name: str = "prison-health") -> dict[str, str]:
    """A series and its publisher's headers (an admin's headers are :data:`ADMIN`)."""
    body = {
        "name": name,
        "private_terms": ["HIV", "cancer"],
        "params": {"r_th": 2, "cluster_size": 2, "seed": 1},
    }
    response = await client.post("/v1/series", json=body, headers=ADMIN)
    assert response.status_code == 201, response.text
    key = await client.post("/v1/keys", json={"role": "publisher", "series": name}, headers=ADMIN)
    assert key.status_code == 201, key.text
    return {"Authorization": f"Bearer {key.json()['key']}"}


async def wait_status(
    client: httpx.AsyncClient,
    job_id: str,
    statuses: tuple[str, ...] = ("succeeded", "failed"),
    timeout: float = 90,
) -> dict[str, Any]:
    """The job once its status is one of ``statuses`` (a read the outage fails is retried)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        response = await client.get(f"/v1/jobs/{job_id}", headers=ADMIN)
        if response.status_code in (200, 202) and response.json()["status"] in statuses:
            return dict(response.json())
        await asyncio.sleep(0.1)
    raise AssertionError(f"job {job_id} never reached {statuses}: {response.text}")


async def release_numbers(client: httpx.AsyncClient, name: str = "prison-health") -> list[int]:
    response = await client.get(f"/v1/series/{name}/releases", headers=ADMIN)
    assert response.status_code == 200, response.text
    return [r["release_no"] for r in response.json()]


def database_name(url: str) -> str:
    from app.db.embedded import database_name as name

    return name(url)

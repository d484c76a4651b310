"""No transaction held open while a release is computed (docs/deploy.md, "PostgreSQL
settings"): a publication works under ``idle_in_transaction_session_timeout``, publications of
one series still take turns, and a worker killed while holding its series lets it go."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import psycopg
import pytest

from app.db.embedded import libpq_url
from tests.faults.conftest import (
    ADMIN,
    TEXT,
    corpus,
    database_name,
    release_numbers,
    setup_series,
    wait_status,
)
from tests.support.database import ROOT

pytestmark = [pytest.mark.anyio, pytest.mark.db]

URL = "/v1/series/prison-health/releases"


async def _set_idle_timeout(client: httpx.AsyncClient, url: str, value: str | None) -> None:
    """``idle_in_transaction_session_timeout`` of every new session of the database (``None``:
    the server's default); the service's pooled connections are closed, so that its sessions
    have it from now on."""
    name = database_name(url)
    setting = "RESET idle_in_transaction_session_timeout"
    if value is not None:
        setting = f"SET idle_in_transaction_session_timeout = '{value}'"
    async with await psycopg.AsyncConnection.connect(libpq_url(url), autocommit=True) as conn:
        await conn.execute(f'ALTER DATABASE "{name}" {setting}')  # type: ignore[arg-type]
    await client.app.state.runtime.db.engine.dispose()  # type: ignore[attr-defined]


@pytest.fixture
async def idle_timeout_of_one_second(
    client: httpx.AsyncClient, fault_url: str
) -> AsyncIterator[None]:
    """What managed and hardened PostgreSQL deployments set, at its harshest."""
    await _set_idle_timeout(client, fault_url, "1s")
    try:
        yield
    finally:
        await _set_idle_timeout(client, fault_url, None)


async def _idle_in_transaction(url: str, seconds: float) -> list[float]:
    """Every ``seconds`` / 0.1 samples of ``pg_stat_activity``: for each sample, the longest
    time a session of the database had been idle in a transaction."""
    found = []
    async with await psycopg.AsyncConnection.connect(libpq_url(url), autocommit=True) as conn:
        for _ in range(int(seconds / 0.1)):
            cur = await conn.execute(
                "SELECT coalesce(max(extract(epoch FROM now() - state_change)), 0) "
                "FROM pg_stat_activity WHERE datname = current_database() "
                "AND state LIKE 'idle in transaction%%'"
            )
            row = await cur.fetchone()
            found.append(float(row[0]) if row else 0.0)
            await asyncio.sleep(0.1)
    return found


async def test_a_publication_succeeds_with_idle_in_transaction_timeout_of_one_second(
    client: httpx.AsyncClient,
    fault_url: str,
    idle_timeout_of_one_second: None,
    slow_core: Callable[[float], None],
) -> None:
    """The computation takes 2.5 s, the server ends any session idle in a transaction for 1 s.
    Before, the job's transaction stayed open from the history's read to the store, and
    every publication failed (422 ``internal_error``)."""
    publisher = await setup_series(client)
    slow_core(2.5)
    watch = asyncio.create_task(_idle_in_transaction(fault_url, 4.0))
    response = await client.post(
        f"{URL}?wait=true", content=corpus(1), headers={**publisher, **TEXT}
    )
    assert response.status_code == 201, response.text
    # No session of the job sat in a transaction while the child computed.
    assert max(await watch) < 0.5
    second = await client.post(f"{URL}?wait=true", content=corpus(2), headers={**publisher, **TEXT})
    assert second.status_code == 201, second.text
    assert await release_numbers(client) == [1, 2]


async def _unqueued_job(client: httpx.AsyncClient, body: str) -> uuid.UUID:
    """A job row with its input, not handed to procrastinate (no worker takes it)."""
    from app.db.models import Job
    from app.db.repositories.jobs import JobRepository
    from app.services.ingest import read_corpus
    from app.services.payload import encode_corpus
    from app.services.series import get_series

    runtime = client.app.state.runtime  # type: ignore[attr-defined]

    async def one_chunk():  # type: ignore[no-untyped-def]
        yield body.encode()

    parsed = await read_corpus("text/plain", one_chunk(), limit=10_000, secret=runtime.secret)
    async with runtime.db.session() as session:
        series = await get_series(session, "prison-health")
        job = Job(
            id=uuid.uuid4(),
            series_id=series.id,
            status="queued",
            progress=0.0,
            extra_private_terms=[],
            n_transactions=len(parsed),
            attempts=0,
            phase_seconds={},
        )
        await JobRepository(session).add(job, encode_corpus(parsed.compact))
    return job.id


async def test_two_publications_of_one_series_run_one_after_the_other(
    client: httpx.AsyncClient,
    monkeypatch: pytest.MonkeyPatch,
    forked_compute: None,
    tmp_path: Path,
) -> None:
    """Two runs of one series at once (not through the queue, whose lock would order them):
    the second computes only once the first has stored, against the first's release."""
    from app.core import pipeline
    from app.jobs.publication import run_job

    real = pipeline.publish
    spans = tmp_path / "spans"

    def recorded(method, history, *args, **kwargs):  # type: ignore[no-untyped-def]
        began = time.time()
        time.sleep(1.5)
        published = real(method, history, *args, **kwargs)
        with spans.open("a") as out:
            out.write(f"{began} {time.time()} {len(history.releases)}\n")
        return published

    monkeypatch.setattr(pipeline, "publish", recorded)
    await setup_series(client)
    runtime = client.app.state.runtime  # type: ignore[attr-defined]
    first, second = await _unqueued_job(client, corpus(1)), await _unqueued_job(client, corpus(2))
    await asyncio.gather(run_job(runtime, first), run_job(runtime, second))
    runs = sorted(tuple(map(float, line.split())) for line in spans.read_text().splitlines())
    assert len(runs) == 2
    (_, end_first, history_first), (start_second, _, history_second) = runs
    assert start_second >= end_first, runs
    assert (history_first, history_second) == (0, 1)
    jobs = [(await client.get(f"/v1/jobs/{j}", headers=ADMIN)).json() for j in (first, second)]
    assert sorted(j["release_no"] for j in jobs) == [1, 2]
    assert all(j["status"] == "succeeded" for j in jobs), jobs
    assert await release_numbers(client) == [1, 2]


_WORKER = """
import asyncio, os, sys, time, uuid
from app.core import pipeline
from app.jobs import compute
from app.jobs.publication import run_job
from app.runtime import start_runtime
from tests.faults.conftest import fault_settings

def slow(*args, **kwargs):
    # Computes until its worker is gone (then it is reparented), and ends with it.
    worker = os.getppid()
    while os.getppid() == worker:
        time.sleep(0.1)
    os._exit(1)
pipeline.publish = slow
compute.START_METHOD = "fork"

async def main():
    runtime = await start_runtime(fault_settings(sys.argv[1]))
    await run_job(runtime, uuid.UUID(sys.argv[2]))

asyncio.run(main())
"""


async def test_a_worker_killed_while_holding_its_series_is_recovered(
    client: httpx.AsyncClient, fault_url: str
) -> None:
    """A worker process computing a release (series lock held, no transaction open) is
    killed with SIGKILL: its session ends, the lock with it; the restarted worker requeues the
    job at once and publishes it."""
    from app.jobs.publication import run_job
    from app.jobs.worker import requeue_dead_here

    await setup_series(client)
    job_id = await _unqueued_job(client, corpus(1))
    worker = subprocess.Popen([sys.executable, "-c", _WORKER, fault_url, str(job_id)], cwd=ROOT)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            job = (await client.get(f"/v1/jobs/{job_id}", headers=ADMIN)).json()
            if job["status"] == "running" and job["phase"] == "prepare":
                break
            await asyncio.sleep(0.1)
        else:
            raise AssertionError(f"the worker never computed: {job}")
        assert await _advisory_locks(fault_url) == 1
        worker.send_signal(signal.SIGKILL)
        worker.wait()
    finally:
        worker.kill()
        worker.wait()
    runtime = client.app.state.runtime  # type: ignore[attr-defined]
    for _ in range(50):  # PostgreSQL notices the closed connection within moments
        if await _advisory_locks(fault_url) == 0:
            break
        await asyncio.sleep(0.1)
    assert await requeue_dead_here(runtime) == 1
    await asyncio.wait_for(run_job(runtime, job_id), 60)
    done = await wait_status(client, str(job_id))
    assert done["status"] == "succeeded" and done["release_no"] == 1, done
    assert done["attempts"] == 2
    assert [i["reason"] for i in done["interruptions"]] == ["worker_restarted"]


async def _advisory_locks(url: str) -> int:
    """Advisory locks of the PUBLISH space held on the database."""
    async with await psycopg.AsyncConnection.connect(libpq_url(url), autocommit=True) as conn:
        cur = await conn.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
            "AND classid = 2 AND database = (SELECT oid FROM pg_database "
            "WHERE datname = current_database())"
        )
        row = await cur.fetchone()
    return int(row[0]) if row else 0

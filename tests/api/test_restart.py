"""A restarted process takes back, at once, the jobs its crashed predecessor was running."""

from __future__ import annotations

import subprocess
import time

import httpx
import psutil
import pytest

from app.settings import Settings
from tests.api.conftest import create_key, create_series, wait_job

pytestmark = [pytest.mark.anyio, pytest.mark.db]


def _dead_process() -> tuple[int, float]:
    """The pid and start time of a process that has exited."""
    process = subprocess.Popen(["sleep", "30"])
    started = psutil.Process(process.pid).create_time()
    process.kill()
    process.wait()
    return process.pid, started


async def _job_of_a_crashed_process(
    client: httpx.AsyncClient, pid: int, started: float, host: str | None = None
) -> str:
    """A job 'running' on this host in ``pid``, whose worker's heartbeat is still fresh."""
    from app.db.raw import driver_connection
    from app.jobs.processes import current_process
    from app.services.auth import authenticate
    from app.services.ingest import read_corpus
    from app.services.publishing import create_job
    from app.services.series import get_series

    runtime = client.app.state.runtime  # type: ignore[attr-defined]

    async def one_chunk():  # type: ignore[no-untyped-def]
        yield b"theft arson HIV\ntheft arson\nvandal arson cancer\nabuse arson\n"

    corpus = await read_corpus("text/plain", one_chunk(), limit=10_000)
    async with runtime.db.session() as session:
        series = await get_series(session, "prison-health")
        principal = await authenticate(session, "Bearer test-admin-token")
        job, _ = await create_job(session, principal, series, corpus, None)
        job.status, job.attempts = "running", 1
        job.worker_host = host or current_process().host
        job.worker_pid, job.worker_started = pid, started
        conn = await driver_connection(session)
        cur = await conn.execute(
            "INSERT INTO procrastinate_workers (last_heartbeat) VALUES (now()) RETURNING id"
        )
        worker = (await cur.fetchone())[0]  # type: ignore[index]
        await conn.execute(
            "UPDATE procrastinate_jobs SET status = 'doing', worker_id = %s WHERE id = %s",
            (worker, job.procrastinate_job_id),
        )
    return str(job.id)


async def test_restart_requeues_its_own_jobs_at_once_and_the_job_says_so(
    client: httpx.AsyncClient, settings: Settings
) -> None:
    from app.jobs.worker import run_worker
    from app.runtime import start_runtime

    await create_series(client)
    auditor = await create_key(client, "auditor")
    job_id = await _job_of_a_crashed_process(client, *_dead_process())
    # The restarted process: the heartbeat rule alone would wait ten minutes.
    restarted = settings.model_copy(update={"stalled_after_s": 600.0})
    began = time.monotonic()
    runtime = await start_runtime(restarted)
    try:
        await run_worker(runtime, wait=False)
    finally:
        await runtime.db.dispose()
    done = await wait_job(client, job_id, auditor)
    assert time.monotonic() - began < settings.stalled_after_s + 10
    assert done["status"] == "succeeded" and done["release_no"] == 1, done
    assert done["attempts"] == 2
    assert [i["reason"] for i in done["interruptions"]] == ["worker_restarted"]
    assert done["interruptions"][0]["attempt"] == 1


async def test_a_dead_pid_of_another_pid_namespace_is_not_judged(client: httpx.AsyncClient) -> None:
    """Same host name, another pid namespace (a container on host networking): left to the
    heartbeat, never requeued on the strength of a pid that means nothing here."""
    from app.jobs.processes import current_process
    from app.jobs.worker import requeue_dead_here

    await create_series(client)
    name = current_process().host.split("/")[0]
    job_id = await _job_of_a_crashed_process(client, *_dead_process(), host=f"{name}/pid:[1]")
    runtime = client.app.state.runtime  # type: ignore[attr-defined]
    assert await requeue_dead_here(runtime) == 0
    auditor = await create_key(client, "auditor")
    await wait_job(client, job_id, auditor)  # the stalled-job recovery takes it later


async def test_a_live_process_keeps_its_jobs(client: httpx.AsyncClient) -> None:
    """The same host, a pid that is alive with the recorded start time: not requeued."""
    from app.jobs.worker import requeue_dead_here

    await create_series(client)
    me = psutil.Process()
    job_id = await _job_of_a_crashed_process(client, me.pid, me.create_time())
    runtime = client.app.state.runtime  # type: ignore[attr-defined]
    assert await requeue_dead_here(runtime) == 0
    auditor = await create_key(client, "auditor")
    job = (await client.get(f"/v1/jobs/{job_id}", headers=auditor)).json()
    assert job["status"] == "running" and job["interruptions"] == []
    # Let the stalled-job recovery clean up before the tables are emptied.
    await wait_job(client, job_id, auditor)

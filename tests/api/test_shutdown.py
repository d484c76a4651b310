"""A worker that stops mid-job puts the job back in the queue; the job lists the interruption."""

from __future__ import annotations

import asyncio
import sys
import time
import uuid

import httpx
import pytest

from tests.api.conftest import create_key, create_series

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.db,
    pytest.mark.skipif(
        sys.platform != "linux",
        reason="the slow stand-in reaches the job's process by fork (Linux)",
    ),
]


async def _unqueued_job(client: httpx.AsyncClient) -> uuid.UUID:
    """A job row with its input, not handed to procrastinate (no other worker may take it)."""
    from app.db.models import Job
    from app.db.repositories.jobs import JobRepository
    from app.services.ingest import read_corpus
    from app.services.payload import encode_corpus
    from app.services.series import get_series

    runtime = client.app.state.runtime  # type: ignore[attr-defined]

    async def one_chunk():  # type: ignore[no-untyped-def]
        yield b"theft arson HIV\ntheft arson\nvandal arson cancer\nslowterm arson\n"

    corpus = await read_corpus("text/plain", one_chunk(), limit=10_000, secret=runtime.secret)
    async with runtime.db.session() as session:
        series = await get_series(session, "prison-health")
        job = Job(
            id=uuid.uuid4(),
            series_id=series.id,
            status="queued",
            progress=0.0,
            extra_private_terms=[],
            n_transactions=4,
            attempts=0,
            phase_seconds={},
        )
        await JobRepository(session).add(job, encode_corpus(corpus.compact))
    return job.id


async def test_stopping_worker_requeues_its_running_job(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch, forked_compute: None
) -> None:
    from app.core import pipeline
    from app.jobs.publication import run_job

    real = pipeline.publish

    def slow(method, history, corpus, *args, **kwargs):  # type: ignore[no-untyped-def]
        time.sleep(30)
        return real(method, history, corpus, *args, **kwargs)

    monkeypatch.setattr(pipeline, "publish", slow)
    await create_series(client)
    auditor = await create_key(client, "auditor")
    job_id = await _unqueued_job(client)
    runtime = client.app.state.runtime  # type: ignore[attr-defined]
    running = asyncio.create_task(run_job(runtime, job_id))
    for _ in range(200):
        if (await client.get(f"/v1/jobs/{job_id}", headers=auditor)).json()["status"] == "running":
            break
        await asyncio.sleep(0.05)
    running.cancel()  # what procrastinate does to running jobs past the shutdown grace
    with pytest.raises(asyncio.CancelledError):
        await running
    job = (await client.get(f"/v1/jobs/{job_id}", headers=auditor)).json()
    assert job["status"] == "queued" and job["error"] is None, job
    assert [i["reason"] for i in job["interruptions"]] == ["worker_shutdown"]
    assert len((await client.get("/v1/series/prison-health/releases", headers=auditor)).json()) == 0
    # The next run publishes it (procrastinate's retry, here called directly).
    monkeypatch.setattr(pipeline, "publish", real)
    await run_job(runtime, job_id)
    job = (await client.get(f"/v1/jobs/{job_id}", headers=auditor)).json()
    assert job["status"] == "succeeded" and job["release_no"] == 1 and job["attempts"] == 2


def test_the_task_is_retried_after_a_cancellation_only() -> None:
    from app.jobs.task import publish_release

    strategy = publish_release.retry_strategy
    assert strategy is not None
    job = publish_release.configure().job
    assert strategy.get_retry_exception(asyncio.CancelledError(), job) is not None
    assert strategy.get_retry_exception(RuntimeError("boom"), job) is None

"""The job queue (procrastinate, in PostgreSQL) and its one task. Jobs are thin: they open
the runtime's database and call :func:`app.services.jobs.run_job` (Polar ``tasks.py``)."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator

import procrastinate
import procrastinate.jobs
import procrastinate.retry
import psycopg

from app.db.embedded import libpq_url

__all__ = ["queue", "publish_release", "open_queue", "defer_publication", "QUEUE_NAME"]

QUEUE_NAME = "publish"

queue = procrastinate.App(connector=procrastinate.PsycopgConnector(), import_paths=["app.tasks"])


class RequeueWhenStopped(procrastinate.retry.BaseRetryStrategy):
    """Run a job again, at once, when a stopping worker cancelled it.

    The task itself never raises for a failed publication (the job row records it), so a
    cancellation is the only way out with an exception. A job its publisher cancelled
    (``abort_requested``) is not run again: procrastinate fails it instead of retrying.
    """

    def get_retry_decision(
        self, *, exception: BaseException, job: procrastinate.jobs.Job
    ) -> procrastinate.retry.RetryDecision | None:
        if isinstance(exception, asyncio.CancelledError):
            return procrastinate.retry.RetryDecision(retry_in={"seconds": 0})
        return None


@queue.task(name="serialpub.publish_release", queue=QUEUE_NAME, retry=RequeueWhenStopped())
async def publish_release(job_id: str) -> None:
    from app.runtime import current_runtime
    from app.services.jobs import run_job

    await run_job(current_runtime(), uuid.UUID(job_id))


@contextlib.asynccontextmanager
async def open_queue(database_url: str, *, max_size: int = 4) -> AsyncIterator[procrastinate.App]:
    """Open the queue on a fresh connection pool (one per runtime, so tests can reopen)."""
    connector = procrastinate.PsycopgConnector(
        conninfo=libpq_url(database_url), min_size=1, max_size=max_size
    )
    with queue.replace_connector(connector):
        async with queue.open_async():
            yield queue


async def defer_publication(
    connection: psycopg.AsyncConnection[object], job_id: uuid.UUID, series_id: int
) -> int:
    """Defer the job inside the caller's transaction (a rollback leaves no job).

    The procrastinate ``lock`` makes the jobs of one series run one at a time, in the order
    they were created.
    """
    return await publish_release.configure(
        lock=f"series:{series_id}", connection=connection
    ).defer_async(job_id=str(job_id))

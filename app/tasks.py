"""The job queue's one task (procrastinate, in PostgreSQL). Jobs are thin: they open the
runtime's database and call :func:`app.services.jobs.run_job` (Polar ``tasks.py``). The queue
itself, and deferring a publication, are :mod:`app.queue`'s, below the services."""

from __future__ import annotations

import asyncio
import uuid

import procrastinate.jobs
import procrastinate.retry

from app.queue import PUBLISH_TASK, QUEUE_NAME, defer_publication, open_queue, queue

__all__ = ["queue", "publish_release", "open_queue", "defer_publication", "QUEUE_NAME"]


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


@queue.task(name=PUBLISH_TASK, queue=QUEUE_NAME, retry=RequeueWhenStopped())
async def publish_release(job_id: str) -> None:
    from app.runtime import current_runtime
    from app.services.jobs import run_job

    await run_job(current_runtime(), uuid.UUID(job_id))

"""The job queue's one task (procrastinate, in PostgreSQL). It is thin: it takes the runtime's
database and runs the publication job's steps (:func:`app.jobs.publication.run_job`). The queue
itself, and deferring a publication, are :mod:`app.jobs.queue`'s, which imports this module
when it opens (``import_paths``): the services that submit jobs never import it."""

from __future__ import annotations

import asyncio
import uuid

import procrastinate.jobs
import procrastinate.retry

from app.jobs.publication import run_job
from app.jobs.queue import PUBLISH_TASK, QUEUE_NAME, queue
from app.runtime import current_runtime

__all__ = ["RequeueWhenStopped", "publish_release"]


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
    await run_job(current_runtime(), uuid.UUID(job_id))

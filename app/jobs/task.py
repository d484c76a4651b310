"""The job queue's one task (procrastinate, in PostgreSQL). It is thin: it takes the runtime
of the worker that runs it (its job context's ``additional_context``, set by
:func:`app.jobs.worker.run_worker`) and runs the publication job's steps
(:func:`app.jobs.publication.run_job`). The queue itself, and deferring a publication, are
:mod:`app.queue`'s, which imports this module when it opens (``import_paths``): the
services that submit jobs never import it."""

from __future__ import annotations

import asyncio
import uuid

import procrastinate.job_context
import procrastinate.jobs
import procrastinate.retry

from app.jobs.publication import (
    ComputeKilledRequeued,
    JobOutcomeUnrecorded,
    NotYetItsTurn,
    run_job,
)
from app.queue import PUBLISH_TASK, QUEUE_NAME, queue
from app.runtime import Runtime

__all__ = ["RUNTIME_KEY", "RequeueWhenStopped", "publish_release"]


#: Seconds before a job whose compute child was killed runs again: a moment for the memory
#: that an out-of-memory kill was short of to be given back.
KILLED_RETRY_S = 2
#: Seconds before a job whose outcome the database did not take runs again.
UNRECORDED_RETRY_S = 5
#: Seconds before a job that waits for an earlier post of its series (lost by the queue, to
#: be queued again) tries again.
TURN_RETRY_S = 1


class RequeueWhenStopped(procrastinate.retry.BaseRetryStrategy):
    """Run a job again, at once, when a stopping worker cancelled it; a few seconds later
    when its compute child was killed (an out-of-memory kill), when the database stayed away
    too long for the job to record how it ended, or when an earlier post of its series is
    still to be queued again (releases keep posting order).

    The task itself never raises for a failed publication (the job row records it), so
    these are the only ways out with an exception. A job its publisher cancelled
    (``abort_requested``) is not run again: procrastinate fails it instead of retrying. A
    job run again counts the run as an attempt and gives up past
    ``SERIALPUB_JOB_MAX_ATTEMPTS``.
    """

    def get_retry_decision(
        self, *, exception: BaseException, job: procrastinate.jobs.Job
    ) -> procrastinate.retry.RetryDecision | None:
        if isinstance(exception, asyncio.CancelledError):
            return procrastinate.retry.RetryDecision(retry_in={"seconds": 0})
        if isinstance(exception, ComputeKilledRequeued):
            return procrastinate.retry.RetryDecision(retry_in={"seconds": KILLED_RETRY_S})
        if isinstance(exception, JobOutcomeUnrecorded):
            return procrastinate.retry.RetryDecision(retry_in={"seconds": UNRECORDED_RETRY_S})
        if isinstance(exception, NotYetItsTurn):
            return procrastinate.retry.RetryDecision(retry_in={"seconds": TURN_RETRY_S})
        return None


#: The key of the worker's runtime in the job context's ``additional_context``.
RUNTIME_KEY = "runtime"


@queue.task(name=PUBLISH_TASK, queue=QUEUE_NAME, retry=RequeueWhenStopped(), pass_context=True)
async def publish_release(context: procrastinate.job_context.JobContext, job_id: str) -> None:
    # The worker's own runtime, not a process-wide one: two apps in one process (an
    # in-process worker beside another service's) each run their jobs on their own database.
    runtime: Runtime = context.additional_context[RUNTIME_KEY]
    await run_job(runtime, uuid.UUID(job_id))

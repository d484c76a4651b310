"""Database outages inside a job: each step retried from where nothing is half-written.

A job is a chain of short transactions with work between them (:mod:`app.jobs.publication`):
mark the job running; read the series' history; compute, with no transaction open; store the
release and finish the job in one transaction. A restart, a failover or a cut connection
fails at most the transaction under way, which PostgreSQL rolls back whole: that step alone
is run again, with what the job already computed, once the database answers. Each outage
the job lived through is listed in its ``interruptions`` (reason ``database_outage``,
with the step and the error's class) and counts as an attempt; past
``SERIALPUB_JOB_MAX_ATTEMPTS`` the job fails (``job_interrupted``), and an outage longer
than :data:`OUTAGE_WINDOW_S` gives up the step.

Only transient faults are retried (:func:`app.db.engine.is_transient`): a lost or refused
connection, the server shutting down or starting, a failover's read-only server, a
serialization failure. A full disk, a bug or a refused statement fail the job at once.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import TypeVar

from app.core.errors import ErrorCode
from app.db.base import utcnow
from app.db.engine import is_transient
from app.db.repositories.jobs import JobRepository
from app.errors import AppError
from app.observability import logger
from app.runtime import Runtime
from app.services.publishing import FINISHED

__all__ = ["OUTAGE_WINDOW_S", "Recovered", "outage_noter", "retrying"]

_T = TypeVar("_T")
_log = logger("serialpub.jobs")

#: Seconds a step keeps retrying through one outage before it gives up (a fast restart takes
#: under a second, a managed failover 30-120 s; docs/deploy.md).
OUTAGE_WINDOW_S = 180.0
#: Seconds between tries: short first (a restart), then at most the last.
_BACKOFF_S = (0.2, 0.5, 1.0, 2.0, 5.0)

#: Called once the database answers again after an outage, before the step runs again:
#: ``(step, error)`` (the job records the interruption; it may refuse to go on by raising).
Recovered = Callable[[str, BaseException], Awaitable[None]]


async def retrying(
    step: str,
    fn: Callable[[], Awaitable[_T]],
    *,
    recovered: Recovered | None = None,
    window: float | None = None,
) -> _T:
    """``await fn()``, run again after a transient database fault until it succeeds or the
    outage has lasted ``window`` seconds (:data:`OUTAGE_WINDOW_S`); then the fault is
    raised. ``fn`` must be one transaction (or none): a fault leaves nothing of it behind.
    ``recovered`` runs, once per outage, when the database answers again (its own transient
    faults are waited out like the step's)."""
    window = OUTAGE_WINDOW_S if window is None else window
    pending: BaseException | None = None
    began = 0.0
    tries = 0
    while True:
        try:
            if pending is not None and recovered is not None:
                await recovered(step, pending)
            pending, tries = None, 0
            return await fn()
        except Exception as exc:
            if not is_transient(exc):
                raise
            if pending is None:
                pending, began = exc, time.monotonic()
                _log.warning(
                    "database unavailable; the step will run again",
                    step=step,
                    error=type(exc).__name__,
                    message=str(exc).strip().splitlines()[0] if str(exc).strip() else "",
                )
            if time.monotonic() - began >= window:
                _log.error("database unavailable for too long; giving up", step=step, window=window)
                raise
        await asyncio.sleep(_BACKOFF_S[min(tries, len(_BACKOFF_S) - 1)])
        tries += 1


def outage_noter(runtime: Runtime, job_id: uuid.UUID) -> Recovered:
    """What :func:`retrying` calls for job ``job_id`` once the database is back: the outage
    becomes one of the job's interruptions (``database_outage``) and attempts; past
    ``SERIALPUB_JOB_MAX_ATTEMPTS`` the job gives up (``job_interrupted``)."""

    async def noted(step: str, error: BaseException) -> None:
        async with runtime.db.session() as session:
            job = await JobRepository(session).get(job_id, for_update=True)
            if job is None or job.status in FINISHED:
                return
            if job.attempts >= runtime.settings.job_max_attempts:
                raise AppError(
                    f"the job was interrupted {job.attempts} times; giving up",
                    {"attempts": job.attempts},
                    code=ErrorCode.JOB_INTERRUPTED,
                )
            job.interruptions = [
                *(job.interruptions or []),
                {
                    "at": utcnow().isoformat(),
                    "reason": "database_outage",
                    "attempt": job.attempts,
                    "step": step,
                    "error": type(error).__name__,
                },
            ]
            job.attempts += 1
        _log.info("database back; the step runs again", step=step, attempt=job.attempts)

    return noted

"""Posting a release: job creation (202), idempotency, waiting (201) and dry runs.

The transaction boundary is the caller's; this module only flushes. A job row, its
transient input and its procrastinate job are created in one transaction. A dry run is such
a job too, computed by the worker like a publication (:mod:`app.jobs.dry_run`); its answer
comes back on the job's row, never from this process.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.core.errors import ErrorCode
from app.db.base import utcnow
from app.db.engine import Database, is_transient
from app.db.locks import LockSpace, xact_lock
from app.db.models import IdempotencyKey, Job, Series
from app.db.raw import driver_connection
from app.db.repositories.jobs import JobRepository
from app.errors import Conflict, NotFound
from app.queue import submit
from app.schemas.jobs import DryRunOutcome, Interruption, JobOut, ReleaseSummary
from app.schemas.releases import PublishResult
from app.schemas.risk import RiskSummary
from app.services.auth import Principal
from app.services.ingest import Corpus
from app.services.payload import encode_corpus, match_private_terms
from app.services.series import series_warnings

__all__ = [
    "CANCELLED",
    "FINISHED",
    "RETRYABLE",
    "cancel_job",
    "create_job",
    "dry_run_answer",
    "get_job",
    "job_out",
    "posting_warnings",
    "wait_for_job",
]

FINISHED = ("succeeded", "failed")

#: The errors of a job that stored nothing and failed for a fault of the service's, not of its
#: post: a full disk, a database that stayed away, a job interrupted past its attempts (its
#: workers or compute children died). Each says to post again, and a post with the same
#: ``Idempotency-Key`` and body then runs again, as a new job, rather than answer the failure
#: again: such a job does not keep its key (docs/api-releases.md). Every other outcome does:
#: a release, a refusal of the snapshot (it would be refused again), a cancellation.
RETRYABLE = frozenset(
    {ErrorCode.STORAGE_FULL, ErrorCode.DATABASE_UNAVAILABLE, ErrorCode.JOB_INTERRUPTED}
)

#: The error of a job cancelled by ``DELETE /v1/jobs/{id}`` (docs/api-releases.md "DELETE
#: /v1/jobs/{job_id}"): here, or in the worker running it (:mod:`app.jobs.publication`).
CANCELLED: dict[str, Any] = {
    "code": ErrorCode.JOB_CANCELLED,
    "message": "the job was cancelled",
    "details": {},
}


def job_out(
    job: Job,
    series_name: str,
    principal: Principal | None,
    warnings: list[dict[str, str]] | None = None,
) -> JobOut:
    """The job as the API shows it to ``principal``; ``warnings``: those given (the series'
    and, in a post's 202, those about its terms), else those the job's report recorded."""
    private = principal is not None and principal.sees_private
    poster = principal is not None and job.api_key_id == principal.key_id
    found = (job.report or {}).get("suppressed")
    outcome = _outcome(job, private)
    if warnings is None and outcome is not None:
        warnings = list(outcome.warnings)
    return JobOut(
        id=job.id,
        series=series_name,
        status=job.status,
        phase=job.phase,
        progress=job.progress,
        release_no=job.release_no,
        error=job.error,
        created_at=job.created_at,
        finished_at=job.finished_at,
        attempts=job.attempts,
        interruptions=[Interruption.model_validate(i) for i in job.interruptions or []],
        cancel_requested=job.cancel_requested_at is not None,
        report=job.report if private else None,
        phase_seconds=job.phase_seconds if private else None,
        suppressed=dict(found) if isinstance(found, dict) and (private or poster) else None,
        warnings=warnings if warnings is not None else list((job.report or {}).get("warnings", [])),
        dry_run=job.dry_run,
        result=outcome,
    )


def _outcome(job: Job, sees_private: bool) -> DryRunOutcome | None:
    """A finished dry run's answer (:func:`app.jobs.dry_run.dry_run_result`) for its reader:
    every counterfeit row and the suppressed copies for auditors and admins, what the
    release would publish for everybody else."""
    if not job.dry_run or not job.result:
        return None
    result = job.result
    return DryRunOutcome(
        release=ReleaseSummary.model_validate(result["release"]),
        risk=RiskSummary.model_validate(result["risk"]["private" if sees_private else "public"]),
        warnings=list(result.get("warnings", [])),
    )


def dry_run_answer(job: Job, principal: Principal) -> PublishResult:
    """The ``dry_run=true&wait=true`` answer (200) of a dry run that succeeded."""
    outcome = _outcome(job, principal.sees_private)
    assert outcome is not None, "a succeeded dry run keeps its answer"
    return PublishResult(
        dry_run=True,
        job=None,
        release=outcome.release,
        risk=outcome.risk,
        warnings=outcome.warnings,
    )


async def create_job(
    session: AsyncSession,
    principal: Principal,
    series: Series,
    corpus: Corpus,
    idempotency_key: str | None,
    upload_seconds: float | None = None,
    *,
    dry_run: bool = False,
) -> tuple[Job, bool]:
    """The queued job for ``corpus``; ``(job, True)`` when an Idempotency-Key replays one.
    A key whose job failed for a fault of the service's (:data:`RETRYABLE`) replays nothing:
    the post runs again as a new job, which the key names from then on.

    ``upload_seconds``: the API's time to receive and parse the body, which opens the job's
    ``phase_seconds`` (as ``upload+parse``; the worker adds its phases). A ``dry_run`` job
    ignores ``idempotency_key``: a dry run stores nothing to replay, and a key it took would
    answer the real post that follows with the dry run."""
    repo = JobRepository(session)
    if dry_run:
        idempotency_key = None
    existing: IdempotencyKey | None = None
    if idempotency_key is not None:
        # Scoped by the API key: another publisher's key of the same name is another key.
        await xact_lock(session, LockSpace.IDEMPOTENCY, f"{principal.key_id}:{idempotency_key}")
        existing = await repo.idempotency(principal.key_id, idempotency_key)
        if existing is not None:
            if existing.series_id != series.id or existing.body_hash != corpus.body_hash:
                raise Conflict(
                    "this Idempotency-Key was used with a different request",
                    {"idempotency_key": idempotency_key},
                    code=ErrorCode.IDEMPOTENCY_KEY_REUSED,
                )
            job = await repo.get(existing.job_id)
            assert job is not None
            if not _runs_again(job):
                return job, True
    # Serialise job creation per series so that creation order is commit order.
    await xact_lock(session, LockSpace.POST, series.id)
    # Under that lock a series' deletion (app.services.series) cannot interleave: a series
    # deleted since the caller read it answers 404, not a foreign-key violation.
    if await session.scalar(select(Series.id).where(Series.id == series.id)) is None:
        raise NotFound(f"no series {series.name!r}", {"series": series.name})
    job = Job(
        id=uuid.uuid4(),
        series_id=series.id,
        api_key_id=principal.key_id,
        status="queued",
        progress=0.0,
        label=corpus.label,
        extra_private_terms=sorted(set(corpus.private_terms)),
        n_transactions=len(corpus),
        attempts=0,
        phase_seconds={} if upload_seconds is None else {"upload+parse": round(upload_seconds, 4)},
        dry_run=dry_run,
        # The lock above orders creations; now() is the transaction's start, which can
        # precede another post's lock: the clock after the lock keeps created_at in posting
        # (and numbering) order.
        created_at=func.clock_timestamp(),
    )
    payload = await asyncio.to_thread(encode_corpus, corpus.compact)
    await repo.add(job, payload)
    job.procrastinate_job_id = await submit(
        await driver_connection(session), job.id, series.id, dry_run=dry_run
    )
    if existing is not None:
        existing.job_id = job.id
    elif idempotency_key is not None:
        await repo.add_idempotency(
            principal.key_id, idempotency_key, series.id, corpus.body_hash, job.id
        )
    await session.flush()
    await session.refresh(job)
    return job, False


def _runs_again(job: Job) -> bool:
    """Whether a post replaying ``job``'s key runs again: the job failed, storing nothing,
    with an error that says to post again (:data:`RETRYABLE`)."""
    code = (job.error or {}).get("code")
    return job.status == "failed" and job.release_no is None and code in RETRYABLE


async def posting_warnings(series: Series, corpus: Corpus) -> list[dict[str, str]]:
    """What a post answers before its job has run (202): the series' warnings and those about
    the snapshot's terms (spellings of a private term, a private term it never names),
    matched against the series' private terms as of now. The job matches again when it
    runs, against the private terms of then, and its warnings say what it found."""
    _, _, found = await asyncio.to_thread(
        match_private_terms,
        corpus.compact,
        series.private_terms,
        corpus.private_terms,
        series.private_match,  # type: ignore[arg-type]
    )
    return [*series_warnings(series), *found]


async def get_job(session: AsyncSession, job_id: uuid.UUID) -> Job:
    job = await JobRepository(session).get(job_id)
    if job is None:
        raise NotFound(f"no job {job_id}", {"id": str(job_id)})
    return job


async def cancel_job(session: AsyncSession, job_id: uuid.UUID) -> Job:
    """Cancel a queued job now, or ask the worker running it to stop (409 once finished).

    A queued job fails here, in the caller's transaction. A running one is aborted through
    procrastinate (the worker cancels it, its transaction rolls back, the job fails): either
    way no release is stored, as for any failed publication. A job whose release is already
    committed (its semantic audit runs after the commit) answers 409 like a finished one.
    """
    repo = JobRepository(session)
    job = await repo.get(job_id, for_update=True)
    if job is None:
        raise NotFound(f"no job {job_id}", {"id": str(job_id)})
    if job.status in FINISHED:
        raise Conflict(
            f"job {job_id} has already {job.status}; there is nothing to cancel",
            {"id": str(job_id), "status": job.status},
            code=ErrorCode.JOB_FINISHED,
        )
    if job.release_no is not None:
        # Its release is committed (the job is in its semantic audit, after the commit):
        # published is final, and the audit runs to its end.
        raise Conflict(
            f"job {job_id} has already published release {job.release_no}; "
            "there is nothing to cancel",
            {"id": str(job_id), "status": job.status, "release_no": job.release_no},
            code=ErrorCode.JOB_FINISHED,
        )
    if job.procrastinate_job_id is not None:
        # 'todo' becomes 'cancelled'; 'doing' gets abort_requested, which its worker hears
        # (LISTEN/NOTIFY, else its abort polling) and which forbids a retry.
        conn = await driver_connection(session)
        await conn.execute(
            "SELECT procrastinate_cancel_job_v1(%s, true, false)", (job.procrastinate_job_id,)
        )
    job.cancel_requested_at = utcnow()
    if job.status == "queued":
        await repo.finish(job, "failed", error=CANCELLED)
    await session.flush()
    return job


async def wait_for_job(db: Database, job_id: uuid.UUID, timeout: float) -> Job:
    """Poll the job row until it finishes or ``timeout`` seconds pass. A poll the database
    does not answer (a restart, a failover) is tried again: the job goes on meanwhile (it
    waits out the outage itself), and the poster waits for its outcome, not for the outage's
    end; past ``timeout`` the fault is raised (503)."""
    deadline = time.monotonic() + timeout
    # Each wait a fifth longer than the one before, up to half a second: a job that ends at
    # t is seen by about 1.2 t. A small release takes 0.2-0.8 s, which waits that grew by
    # half from 0.05 s answered up to 0.34 s late (now 0.09 s), for 14 polls in its first
    # second instead of 6.
    delay = 0.02
    job: Job | None = None
    while True:
        try:
            async with db.session() as session:
                job = await get_job(session, job_id)
        except Exception as exc:
            if not is_transient(exc) or time.monotonic() >= deadline:
                raise
            job = None
        if job is not None and (job.status in FINISHED or time.monotonic() >= deadline):
            return job
        await asyncio.sleep(delay)
        delay = min(delay * 1.2, 0.5)

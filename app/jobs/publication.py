"""The steps of a publication job (in the procrastinate worker).

1. **Start**: mark the job running (or finish it: cancelled, given up, already published).
2. **Publish**, with no transaction open while the release is computed: take the series'
   lock (:class:`app.db.locks.SessionLock`, a session-level advisory lock on a connection
   of its own, outside any transaction), read the job's context in a short transaction
   (:mod:`app.jobs.context`: the series, its method, parameters and history) and commit it,
   compute (in a child process, :mod:`app.jobs.compute`), then store the release numbered
   ``len(history) + 1`` in one short transaction that checks the series has not moved
   (:mod:`app.jobs.store`). Without a semantic audit the job is marked succeeded in that
   same transaction. A failure rolls the store back and marks the job failed in a separate
   transaction: no partial release. A cancellation (``DELETE /v1/jobs/{id}``, or the worker
   shutting down) does the same, then fails the job or puts it back in the queue.
3. **Audit** (design.md §11), only when the series asks for one: after the commit, so that
   neither its failure nor its time can roll back or hold the release
   (:mod:`app.jobs.audit`); the job shows phase ``attack`` meanwhile.
4. **Finish**: the audited job is marked succeeded, and its raw snapshot dropped.

A database outage (a restart, a failover, a cut connection) fails at most the transaction
under way: that step runs again once the database answers, with what the job computed
(:mod:`app.jobs.outages`), and the job's ``interruptions`` say so.

A job whose release is committed never fails: an interruption after the commit (the worker
stopping or dying during the audit) finishes it as succeeded, without its audit.

A **dry run** (:mod:`app.jobs.dry_run`) takes the same steps without the lock and the store:
its history is read in a short transaction, computed in the child, and only its answer is
written, to the job's row.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from dataclasses import dataclass
from typing import Any, Literal

import structlog
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from app.core.errors import CoreError, ErrorCode
from app.core.model import Publication
from app.db.base import utcnow
from app.db.engine import is_storage_full, is_transient
from app.db.locks import LockSpace, SessionLock
from app.db.models import Job, Series
from app.db.repositories.jobs import JobRepository
from app.db.repositories.release_load import RELEASE_CACHE
from app.errors import AppError, from_core
from app.jobs.audit import ATTACK_PHASE, audit_publication
from app.jobs.compute import Computed, ComputeKilled, publish_isolated
from app.jobs.context import JobContext, build_context, build_handoff
from app.jobs.dry_run import dry_run_result
from app.jobs.outages import Recovered, outage_noter, retrying
from app.jobs.processes import current_process
from app.jobs.progress import ProgressTracker, flush_progress, write_progress
from app.jobs.store import SeriesMoved, store_release
from app.observability import (
    COUNTERFEITS,
    DRY_RUNS,
    JOBS,
    JOBS_RUNNING,
    PHASE_SECONDS,
    ROWS_PUBLISHED,
    SUPPRESSED,
    logger,
)
from app.runtime import Runtime
from app.services.memory import give_back_memory
from app.services.publishing import CANCELLED, FINISHED

__all__ = [
    "RUNNING",
    "ComputeKilledRequeued",
    "JobOutcomeUnrecorded",
    "NotYetItsTurn",
    "note_interruption",
    "run_job",
]

_log = logger("serialpub.jobs")

#: The jobs this process is running now (the worker's reconciliation with the queue leaves
#: them alone: :func:`app.jobs.worker.reconcile_with_queue`).
RUNNING: set[uuid.UUID] = set()

#: Times a publication reads and computes again when its series moved under it (a lost lock:
#: another run of the series stored first). Once is the rule; more means something is wrong.
_MAX_MOVES = 3
#: Seconds a job being stopped waits for the database to record why (the worker's shutdown
#: grace is short); the queue's reconciliation takes over past it.
_INTERRUPTED_WINDOW_S = 5.0


class NotYetItsTurn(Exception):
    """An earlier post of the series lost its run in the queue and waits to be queued again
    (:func:`app.jobs.worker.reconcile_with_queue`): this one runs after it, so that releases
    keep their posting order (:class:`app.jobs.task.RequeueWhenStopped` retries it soon)."""


#: An earlier publication of the series that the queue no longer holds (ended or gone) while
#: its row says it is still to be published.
_EARLIER_LOST = text(
    "SELECT j.id FROM jobs j LEFT JOIN procrastinate_jobs p ON p.id = j.procrastinate_job_id "
    "WHERE j.series_id = :series AND NOT j.dry_run AND j.status IN ('queued', 'running') "
    "AND j.created_at < :created AND j.procrastinate_job_id IS NOT NULL "
    "AND (p.id IS NULL OR p.status NOT IN ('todo', 'doing')) LIMIT 1"
)


class ComputeKilledRequeued(Exception):
    """The job's compute child was killed by a signal (an out-of-memory kill, ``kill -9``)
    and the job was put back in the queue, as a job whose worker died is
    (:class:`app.jobs.task.RequeueWhenStopped` runs it again)."""


class JobOutcomeUnrecorded(Exception):
    """The job ended but its outcome could not be written (the database stayed away): the
    queue runs it again (:class:`app.jobs.task.RequeueWhenStopped`)."""


def note_interruption(job: Job, reason: str, **details: str) -> None:
    """Record that a run of ``job`` ended without a result, and put it back in the queue."""
    # A new list: SQLAlchemy sees JSONB changes by assignment, not by in-place mutation.
    job.interruptions = [
        *(job.interruptions or []),
        {"at": utcnow().isoformat(), "reason": reason, "attempt": job.attempts, **details},
    ]
    job.status, job.phase, job.progress = "queued", None, 0.0


@dataclass(slots=True)
class _Published:
    """What the publish step hands the steps after its commit."""

    context: JobContext
    computed: Computed
    release_id: int
    #: Seconds of ``load`` and of the compute child's whole run (``ipc`` is what is left
    #: of it beyond the core's phases).
    load_s: float
    compute_s: float


#: What a started job is: a publication, or a dry run that stores nothing.
_Kind = Literal["publish", "dry_run"]


@dataclass(frozen=True, slots=True)
class _Started:
    kind: _Kind
    series_id: int


def _count(job: Job, status: str) -> None:
    """A job's outcome in the metrics: publications and dry runs apart."""
    (DRY_RUNS if job.dry_run else JOBS).labels(status).inc()


async def run_job(runtime: Runtime, job_id: uuid.UUID) -> None:
    """Publish the corpus of job ``job_id`` (or compute its dry run); never raises for a
    failed publication. Raises :class:`JobOutcomeUnrecorded` when the database stayed away
    too long to record the outcome."""
    with structlog.contextvars.bound_contextvars(job_id=str(job_id)):
        RUNNING.add(job_id)
        try:
            await _run(runtime, job_id)
        finally:
            RUNNING.discard(job_id)


async def _run(runtime: Runtime, job_id: uuid.UUID) -> None:
    started = await retrying("start", lambda: _start(runtime, job_id))
    if started is None:
        return
    tracker = ProgressTracker()
    flusher = asyncio.create_task(flush_progress(runtime.db, job_id, tracker))
    running = JOBS_RUNNING.labels(started.kind)
    running.inc()
    try:
        if started.kind == "dry_run":
            await _dry_run(runtime, job_id, tracker, flusher)
            return
        published = await _publish(runtime, job_id, started.series_id, tracker, flusher)
        # Committed: later jobs of this process find the release without loading it.
        computed = published.computed
        RELEASE_CACHE.put(
            published.release_id,
            computed.publication.release,
            computed.publication.ledger,
            computed.packed,
        )
        if published.context.audit.enabled:
            failed = not await audit_publication(
                runtime,
                published.context,
                computed.publication,
                published.release_id,
                tracker,
            )
            await retrying("finish", lambda: _finish_audited(runtime, published, tracker, failed))
    except asyncio.CancelledError:
        # The publication's transaction is rolled back (or, in the audit, committed);
        # record why, whatever happens next.
        await asyncio.shield(_interrupted(runtime, job_id, tracker))
        raise
    except ComputeKilled as killed:
        # Killed from outside, as a worker is when it dies: nothing was stored, and nothing
        # says the job itself is at fault. Run again, within the job's attempts.
        _log.error("the job's compute process was killed", signal=killed.signal)
        if await _requeue_killed(runtime, job_id, killed, tracker):
            raise ComputeKilledRequeued(f"job {job_id}: {killed}") from killed
    except Exception as exc:
        error = _error_of(exc)
        if error["code"] == ErrorCode.STORAGE_FULL:
            await runtime.db.storage.failed("publication store")
        await _fail(runtime, job_id, error, tracker)
    finally:
        running.dec()
        flusher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await flusher
        # The history, hand-off and result are garbage now: give their pages back.
        await asyncio.to_thread(give_back_memory)


def _error_of(exc: Exception) -> dict[str, Any]:
    """The job's ``error`` for a failure: the code of an error raised on purpose, a full disk
    or an outage named as such, else ``internal_error`` (with the traceback in the log)."""
    if isinstance(exc, CoreError | AppError):
        error = from_core(exc) if isinstance(exc, CoreError) else exc
        _log.info("job failed", code=error.code, message=error.message)
        return dict(error.body()["error"])
    if is_storage_full(exc):
        _log.error("job failed: the database has no space left", error=str(exc).strip())
        return {
            "code": ErrorCode.STORAGE_FULL,
            "message": "the database has no space left to store the release; nothing was "
            "stored: post it again once space is added",
            "details": {"reason": "disk_full"},
        }
    if is_transient(exc):
        _log.error("job failed: the database stayed unavailable", error=type(exc).__name__)
        return {
            "code": ErrorCode.DATABASE_UNAVAILABLE,
            "message": "the database stayed unavailable; nothing was stored",
            "details": {"reason": type(exc).__name__},
        }
    _log.exception("job crashed")
    return {
        "code": ErrorCode.INTERNAL_ERROR,
        "message": "the publication failed unexpectedly",
        "details": {},
    }


async def _start(runtime: Runtime, job_id: uuid.UUID) -> _Started | None:
    """Mark the job running and say what it is; ``None`` when there is nothing (more) to do."""
    async with runtime.db.session() as session:
        repo = JobRepository(session)
        job = await repo.get(job_id, for_update=True)
        if job is None or job.status in FINISHED:
            return None
        if job.release_no is not None:
            # A run before this one committed the release, then died in its audit: the
            # release stands and its ground truth (the child's result) is gone with it.
            await repo.finish(job, "succeeded", phase="store", progress=1.0)
            _count(job, "succeeded")
            _log.warning("job's release was committed before an interruption; audit skipped")
            return None
        if job.cancel_requested_at is not None:
            await repo.finish(job, "failed", error=CANCELLED)
            _count(job, "cancelled")
            return None
        if job.attempts >= runtime.settings.job_max_attempts:
            await repo.finish(job, "failed", error=_interrupted_error(job))
            _count(job, "failed")
            return None
        if not job.dry_run:
            earlier = await session.scalar(
                _EARLIER_LOST, {"series": job.series_id, "created": job.created_at}
            )
            if earlier is not None:
                _log.info("an earlier post of the series is to be queued again; after it")
                raise NotYetItsTurn(f"job {earlier} was posted before")
        job.attempts += 1
        job.status, job.started_at, job.phase, job.progress = "running", utcnow(), None, 0.0
        me = current_process()
        job.worker_host, job.worker_pid, job.worker_started = me.host, me.pid, me.started
        _log.info("job started", attempt=job.attempts, dry_run=job.dry_run)
        return _Started("dry_run" if job.dry_run else "publish", job.series_id)


def _interrupted_error(job: Job) -> dict[str, Any]:
    """``job_interrupted``, naming the signal when the last run's compute child was killed."""
    message = f"the job was interrupted {job.attempts} times; giving up"
    details: dict[str, Any] = {"attempts": job.attempts}
    last = (job.interruptions or [{}])[-1]
    if last.get("reason") == "compute_killed":
        details["signal"] = last.get("signal")
        message += (
            f"; its compute process was killed by {last.get('signal')} "
            "(the kernel's out-of-memory killer sends SIGKILL: see the worker's memory limit)"
        )
    return {
        "code": ErrorCode.JOB_INTERRUPTED,
        "message": f"{message}; nothing was stored: post it again",
        "details": details,
    }


async def _requeue_killed(
    runtime: Runtime, job_id: uuid.UUID, killed: ComputeKilled, tracker: ProgressTracker
) -> bool:
    """:func:`_record_kill`, waiting out an outage; :class:`JobOutcomeUnrecorded` when the
    database stays away (the queue runs the job again, which counts the lost run)."""
    try:
        return await retrying("killed", lambda: _record_kill(runtime, job_id, killed, tracker))
    except Exception as exc:
        if not is_transient(exc):
            raise
        raise JobOutcomeUnrecorded(f"job {job_id}: {killed}") from exc


async def _record_kill(
    runtime: Runtime, job_id: uuid.UUID, killed: ComputeKilled, tracker: ProgressTracker
) -> bool:
    """Record that the job's compute child was killed: queued again (``True``), or failed
    ``job_interrupted`` naming the signal past ``SERIALPUB_JOB_MAX_ATTEMPTS``, or cancelled
    when its publisher asked for that meanwhile."""
    async with runtime.db.session() as session:
        repo = JobRepository(session)
        job = await repo.get(job_id, for_update=True)
        if job is None or job.status in FINISHED:
            return False
        if job.cancel_requested_at is not None:
            await repo.finish(job, "failed", error=CANCELLED, phase_seconds=tracker.close())
            _count(job, "cancelled")
            return False
        note_interruption(job, "compute_killed", signal=killed.signal)
        if job.attempts >= runtime.settings.job_max_attempts:
            await repo.finish(
                job, "failed", error=_interrupted_error(job), phase_seconds=tracker.close()
            )
            _count(job, "failed")
            return False
        return True


@dataclass(slots=True)
class _Read:
    """What the job reads before it computes."""

    context: JobContext
    payload: bytes
    #: Seconds the read took (the job's ``load`` phase).
    load_s: float
    #: The job's ``phase_seconds`` as the API filed them (``upload+parse``).
    upload: dict[str, float]


async def _read(runtime: Runtime, job_id: uuid.UUID) -> _Read:
    """The job's context and payload, read in one short transaction (committed before the
    computation)."""
    started = time.perf_counter()
    async with runtime.db.session() as session:
        job = await JobRepository(session).get(job_id)
        if job is None:
            raise AppError("the job is gone", code=ErrorCode.JOB_INPUT_MISSING)
        series, payload = await _inputs(session, job)
        context = await build_context(session, job, series)
        upload = dict(job.phase_seconds or {})
    return _Read(context, payload, time.perf_counter() - started, upload)


async def _publish(
    runtime: Runtime,
    job_id: uuid.UUID,
    series_id: int,
    tracker: ProgressTracker,
    flusher: asyncio.Task[None],
) -> _Published:
    """Compute and store the release, holding the series' lock but no transaction while
    the child computes; the job is marked succeeded in the store's transaction, unless its
    series audits it (then after the audit)."""
    noted = outage_noter(runtime, job_id)
    lock = SessionLock(runtime.db.url, LockSpace.PUBLISH, series_id)
    try:
        await retrying("lock", lock.acquire, recovered=noted)
        for _ in range(_MAX_MOVES):
            try:
                return await _publish_once(runtime, job_id, lock, noted, tracker, flusher)
            except SeriesMoved as moved:
                _log.warning("the series moved; reading and computing again", reason=str(moved))
        raise AppError(
            f"the series moved under the job {_MAX_MOVES} times", code=ErrorCode.INTERNAL_ERROR
        )
    finally:
        await lock.release()


async def _publish_once(
    runtime: Runtime,
    job_id: uuid.UUID,
    lock: SessionLock,
    noted: Recovered,
    tracker: ProgressTracker,
    flusher: asyncio.Task[None],
) -> _Published:
    """Read (committed), compute (no transaction), store (checked): :class:`SeriesMoved`
    when another release of the series was stored in between."""
    read = await retrying("load", lambda: _read(runtime, job_id), recovered=noted)
    context = read.context
    started = time.perf_counter()
    handoff = await build_handoff(read.payload, context)
    read.payload = b""
    computed = await publish_isolated(handoff, tracker, tracker.pause)
    compute_seconds = time.perf_counter() - started
    del handoff
    tracker("store", 5 / 6)
    flusher.cancel()
    with contextlib.suppress(Exception):  # the phase shown; the store decides
        await write_progress(runtime.db, job_id, tracker)
    report = _jsonable(computed.publication.report)

    def seconds() -> dict[str, float]:
        return _phase_seconds(read.upload, read.load_s, compute_seconds, tracker.close())

    stored = await retrying(
        "store",
        lambda: store_release(runtime, lock, context, computed, report, seconds),
        recovered=noted,
    )
    if not context.audit.enabled:
        final = seconds()
        _observe(context, computed.publication, final)
        release_no = computed.publication.release.release_no
        _log.info("job succeeded", release_no=release_no, seconds=final)
    return _Published(context, computed, stored.release_id, read.load_s, compute_seconds)


async def _finish_audited(
    runtime: Runtime, published: _Published, tracker: ProgressTracker, audit_failed: bool
) -> None:
    """Mark an audited job succeeded (its release committed before the audit ran)."""
    context, publication = published.context, published.computed.publication
    async with runtime.db.session() as session:
        repo = JobRepository(session)
        job = await repo.get(context.job_id, for_update=True)
        if job is None or job.status in ("succeeded", "failed"):
            return
        seconds = _phase_seconds(
            job.phase_seconds, published.load_s, published.compute_s, tracker.close()
        )
        values: dict[str, Any] = {}
        if audit_failed:
            # The auditors' only trace of why the release has no attack report (besides the
            # log): the job's private report.
            values["report"] = {**(job.report or {}), "semantic_audit": "failed"}
        await repo.finish(
            job, "succeeded", phase_seconds=seconds, phase="store", progress=1.0, **values
        )
    _observe(context, publication, seconds)
    _log.info("job succeeded", release_no=publication.release.release_no, seconds=seconds)


async def _inputs(session: AsyncSession, job: Job) -> tuple[Series, bytes]:
    """The job's series and queued payload (``job_input_missing`` when either is gone)."""
    series = await session.get(Series, job.series_id)
    payload = await JobRepository(session).payload(job.id)
    if series is None or payload is None:
        raise AppError("the job's series or input is gone", code=ErrorCode.JOB_INPUT_MISSING)
    return series, payload


async def _dry_run(
    runtime: Runtime, job_id: uuid.UUID, tracker: ProgressTracker, flusher: asyncio.Task[None]
) -> None:
    """Compute the job's release and risk as a publication would, against the series'
    releases as they are now, and keep only the answer on the job's row. No series lock and
    no transaction held while the child computes: nothing is stored that needs them."""
    noted = outage_noter(runtime, job_id)
    read = await retrying("load", lambda: _read(runtime, job_id), recovered=noted)
    context, load_seconds = read.context, read.load_s
    started = time.perf_counter()
    handoff = await build_handoff(read.payload, context)
    read.payload = b""
    computed = await publish_isolated(handoff, tracker, tracker.pause)
    compute_seconds = time.perf_counter() - started
    del handoff
    flusher.cancel()
    result = dry_run_result(context, computed)
    report = _jsonable(computed.publication.report)
    del computed

    async def record() -> dict[str, float] | None:
        async with runtime.db.session() as session:
            repo = JobRepository(session)
            job = await repo.get(job_id, for_update=True)
            if job is None or job.status in FINISHED:
                return None
            seconds = _phase_seconds(
                job.phase_seconds, load_seconds, compute_seconds, tracker.close()
            )
            await repo.finish(
                job, "succeeded", result=result, report=report, phase_seconds=seconds, progress=1.0
            )
            return seconds

    seconds = await retrying("store", record, recovered=noted)
    if seconds is not None:
        DRY_RUNS.labels("succeeded").inc()
        _log.info("dry run succeeded", seconds=seconds)


def _phase_seconds(
    upload: dict[str, float] | None, load_s: float, compute_s: float, tracked: dict[str, float]
) -> dict[str, float]:
    """The job's seconds per phase: the API's ``upload+parse``, ``load`` (the history, from
    the worker's cache or PostgreSQL), then from the compute child: ``prepare`` (the payload
    decoded into the core's transactions, and the core's validation of them), the core's
    phases as it reported them, ``ipc`` (the hand-off's wall time outside ``prepare`` and the
    core's phases: packing past releases the worker had not packed before, the child's
    start, the payload and packed history crossing the pipe and unpacked in the child, and
    the result's way back), then ``store`` and the semantic audit's ``attack`` (after the
    child, so not part of its wall time)."""
    core = sum(v for k, v in tracked.items() if k not in ("store", ATTACK_PHASE))
    return {
        **(upload or {}),
        "load": round(load_s, 4),
        "prepare": tracked.get("prepare", 0.0),
        **tracked,
        "ipc": round(max(compute_s - core, 0.0), 4),
    }


async def _fail(
    runtime: Runtime, job_id: uuid.UUID, error: dict[str, Any], tracker: ProgressTracker
) -> None:
    """Record the job's failure (waiting out an outage); :class:`JobOutcomeUnrecorded` when
    the database stays away."""
    try:
        await retrying("fail", lambda: _record_failure(runtime, job_id, error, tracker))
    except Exception as exc:
        if not is_transient(exc):
            raise
        raise JobOutcomeUnrecorded(f"job {job_id}: {error['code']}") from exc


async def _record_failure(
    runtime: Runtime, job_id: uuid.UUID, error: dict[str, Any], tracker: ProgressTracker
) -> None:
    async with runtime.db.session() as session:
        repo = JobRepository(session)
        job = await repo.get(job_id, for_update=True)
        if job is None or job.status in FINISHED:
            return
        if job.release_no is not None:
            # Failed after its release was committed (finishing the audited job): the
            # release stands, so the job does not fail.
            seconds = {**(job.phase_seconds or {}), **tracker.close()}
            await repo.finish(job, "succeeded", phase_seconds=seconds, progress=1.0)
            _count(job, "succeeded")
            return
        await repo.finish(job, "failed", error=error, phase_seconds=tracker.close())
        _count(job, "failed")


async def _interrupted(runtime: Runtime, job_id: uuid.UUID, tracker: ProgressTracker) -> None:
    """Fail a job its publisher cancelled; requeue one the worker's shutdown interrupted.
    Briefly: a stopping worker cannot wait for a database that is away; the job row then
    stays ``running`` until the queue's reconciliation or a restart takes it back."""
    try:
        await retrying(
            "interrupted",
            lambda: _record_interruption(runtime, job_id, tracker),
            window=_INTERRUPTED_WINDOW_S,
        )
    except Exception as exc:
        if not is_transient(exc):
            raise
        _log.warning("could not record the job's interruption", error=type(exc).__name__)


async def _record_interruption(
    runtime: Runtime, job_id: uuid.UUID, tracker: ProgressTracker
) -> None:
    async with runtime.db.session() as session:
        repo = JobRepository(session)
        job = await repo.get(job_id, for_update=True)
        if job is None or job.status in FINISHED:
            return  # the commit went through before the cancellation arrived
        if job.release_no is not None:
            # Interrupted in its audit: the release is committed and stands; the audit, whose
            # ground truth was the child's result, is not run again.
            seconds = {**(job.phase_seconds or {}), **tracker.close()}
            await repo.finish(job, "succeeded", phase="store", progress=1.0, phase_seconds=seconds)
            _count(job, "succeeded")
            _log.warning("job interrupted in its audit; the release stands, unaudited")
            return
        if job.cancel_requested_at is not None:
            await repo.finish(job, "failed", error=CANCELLED, phase_seconds=tracker.close())
            _count(job, "cancelled")
            _log.info("job cancelled")
        else:
            note_interruption(job, "worker_shutdown")
            _log.warning("job interrupted by the worker's shutdown; requeued")


def _observe(context: JobContext, publication: Publication, seconds: dict[str, float]) -> None:
    method = context.method.name
    for phase, value in seconds.items():
        PHASE_SECONDS.labels(phase).observe(value)
    ROWS_PUBLISHED.labels(method).inc(publication.release.n_rows)
    COUNTERFEITS.labels(method).inc(sum(c.counterfeits for c in publication.release.clusters))
    SUPPRESSED.labels(method).inc(sum(publication.ledger.suppressed.values()))
    JOBS.labels("succeeded").inc()


def _jsonable(value: Any) -> Any:
    """The core's report as plain JSON values (tuples to lists, keys to strings)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    if isinstance(value, float | int | str | bool) or value is None:
        return value
    return str(value)

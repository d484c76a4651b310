"""The steps of a publication job (in the procrastinate worker).

1. **Start**: mark the job running (or finish it: cancelled, given up, already published).
2. **Publish**, one transaction: take the series' advisory lock, build the job's context once
   (:mod:`app.jobs.context`: the series, its method, parameters and history), compute (in a
   child process, :mod:`app.jobs.compute`), store the release numbered ``len(history) + 1``,
   commit. Without a semantic audit the job is marked succeeded in that same transaction. A
   failure rolls all of it back and marks the job failed in a separate transaction: no
   partial release. A cancellation (``DELETE /v1/jobs/{id}``, or the worker shutting down)
   does the same, then fails the job or puts it back in the queue.
3. **Audit** (design.md §11), only when the series asks for one: after the commit, so that
   neither its failure nor its time can roll back or hold the release
   (:mod:`app.jobs.audit`); the job shows phase ``attack`` meanwhile.
4. **Finish**: the audited job is marked succeeded, and its raw snapshot dropped.

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
from sqlalchemy.ext.asyncio import AsyncSession

from app.core.errors import CoreError, ErrorCode
from app.core.model import Publication
from app.db.base import utcnow
from app.db.locks import LockSpace, xact_lock
from app.db.models import Job, Series
from app.db.repositories.jobs import JobRepository
from app.db.repositories.release_load import RELEASE_CACHE
from app.db.repositories.release_packs import store_pack
from app.db.repositories.release_store import store_publication
from app.errors import AppError, from_core
from app.jobs.audit import ATTACK_PHASE, AUDIT_START, audit_publication
from app.jobs.compute import Computed, publish_isolated
from app.jobs.context import JobContext, build_context, build_handoff
from app.jobs.dry_run import dry_run_result
from app.jobs.processes import current_process
from app.jobs.progress import ProgressTracker, flush_progress, write_progress
from app.methods.storage import storage_of
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
from app.services.renderings import store_release_documents, store_risk_documents

__all__ = ["run_job", "note_interruption"]

_log = logger("serialpub.jobs")


def note_interruption(job: Job, reason: str) -> None:
    """Record that a run of ``job`` ended without a result, and put it back in the queue."""
    # A new list: SQLAlchemy sees JSONB changes by assignment, not by in-place mutation.
    job.interruptions = [
        *(job.interruptions or []),
        {"at": utcnow().isoformat(), "reason": reason, "attempt": job.attempts},
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


def _count(job: Job, status: str) -> None:
    """A job's outcome in the metrics: publications and dry runs apart."""
    (DRY_RUNS if job.dry_run else JOBS).labels(status).inc()


async def run_job(runtime: Runtime, job_id: uuid.UUID) -> None:
    """Publish the corpus of job ``job_id`` (or compute its dry run); never raises for a
    failed publication."""
    with structlog.contextvars.bound_contextvars(job_id=str(job_id)):
        kind = await _start(runtime, job_id)
        if kind is None:
            return
        tracker = ProgressTracker()
        flusher = asyncio.create_task(flush_progress(runtime.db, job_id, tracker))
        running = JOBS_RUNNING.labels(kind)
        running.inc()
        try:
            if kind == "dry_run":
                await _dry_run(runtime, job_id, tracker, flusher)
                return
            async with runtime.db.session() as session:
                published = await _publish(session, runtime, job_id, tracker, flusher)
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
                await _finish_audited(runtime, published, tracker, failed)
        except asyncio.CancelledError:
            # The publication's transaction is rolled back (or, in the audit, committed);
            # record why, whatever happens next.
            await asyncio.shield(_interrupted(runtime, job_id, tracker))
            raise
        except (CoreError, AppError) as exc:
            error = from_core(exc) if isinstance(exc, CoreError) else exc
            _log.info("job failed", code=error.code, message=error.message)
            await _fail(runtime, job_id, error.body()["error"], tracker)
        except Exception:
            _log.exception("job crashed")
            await _fail(
                runtime,
                job_id,
                {
                    "code": ErrorCode.INTERNAL_ERROR,
                    "message": "the publication failed unexpectedly",
                    "details": {},
                },
                tracker,
            )
        finally:
            running.dec()
            flusher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await flusher
            # The history, hand-off and result are garbage now: give their pages back.
            await asyncio.to_thread(give_back_memory)


async def _start(runtime: Runtime, job_id: uuid.UUID) -> _Kind | None:
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
            await repo.finish(
                job,
                "failed",
                error={
                    "code": ErrorCode.JOB_INTERRUPTED,
                    "message": f"the job was interrupted {job.attempts} times; giving up",
                    "details": {"attempts": job.attempts},
                },
            )
            _count(job, "failed")
            return None
        job.attempts += 1
        job.status, job.started_at, job.phase, job.progress = "running", utcnow(), None, 0.0
        me = current_process()
        job.worker_host, job.worker_pid, job.worker_started = me.host, me.pid, me.started
        _log.info("job started", attempt=job.attempts, dry_run=job.dry_run)
        return "dry_run" if job.dry_run else "publish"


async def _publish(
    session: AsyncSession,
    runtime: Runtime,
    job_id: uuid.UUID,
    tracker: ProgressTracker,
    flusher: asyncio.Task[None],
) -> _Published:
    """Compute and store the release, in ``session``'s transaction; the job is marked
    succeeded there too, unless its series audits it (then after the audit)."""
    repo = JobRepository(session)
    job = await repo.get(job_id)
    assert job is not None
    await xact_lock(session, LockSpace.PUBLISH, job.series_id)
    series, payload = await _inputs(session, job)
    started = time.perf_counter()
    context = await build_context(session, job, series)
    load_seconds = time.perf_counter() - started
    started = time.perf_counter()
    handoff = await build_handoff(payload, context)
    del payload
    computed = await publish_isolated(handoff, tracker, tracker.pause)
    compute_seconds = time.perf_counter() - started
    del handoff
    publication = computed.publication
    tracker("store", 5 / 6)
    flusher.cancel()
    await write_progress(runtime.db, job_id, tracker)
    release_id = await _store(session, context, computed)
    published = _Published(context, computed, release_id, load_seconds, compute_seconds)
    release_no = publication.release.release_no
    report = _jsonable(publication.report)
    if context.audit.enabled:
        # Committed with the release, still running: the audit needs the raw snapshot (its
        # ground truth), which ``finish`` drops, and the job ends when the audit does.
        job.release_no, job.report = release_no, report
        job.phase, job.progress = ATTACK_PHASE, AUDIT_START
        await session.flush()
        return published
    seconds = _phase_seconds(
        job.phase_seconds, published.load_s, published.compute_s, tracker.close()
    )
    await repo.finish(
        job,
        "succeeded",
        release_no=release_no,
        report=report,
        phase_seconds=seconds,
        phase="store",
        progress=1.0,
    )
    _observe(context, publication, seconds)
    _log.info("job succeeded", release_no=release_no, seconds=seconds)
    return published


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
    async with runtime.db.session() as session:
        job = await JobRepository(session).get(job_id)
        assert job is not None
        series, payload = await _inputs(session, job)
        started = time.perf_counter()
        context = await build_context(session, job, series)
        load_seconds = time.perf_counter() - started
    started = time.perf_counter()
    handoff = await build_handoff(payload, context)
    del payload
    computed = await publish_isolated(handoff, tracker, tracker.pause)
    compute_seconds = time.perf_counter() - started
    del handoff
    flusher.cancel()
    result = dry_run_result(context, computed)
    report = _jsonable(computed.publication.report)
    del computed
    async with runtime.db.session() as session:
        repo = JobRepository(session)
        job = await repo.get(job_id, for_update=True)
        if job is None or job.status in FINISHED:
            return
        seconds = _phase_seconds(job.phase_seconds, load_seconds, compute_seconds, tracker.close())
        await repo.finish(
            job, "succeeded", result=result, report=report, phase_seconds=seconds, progress=1.0
        )
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


async def _store(session: AsyncSession, context: JobContext, computed: Computed) -> int:
    publication, private_terms = computed.publication, computed.private_terms
    release, series = publication.release, context.series
    storage = storage_of(context.method)
    model = await store_publication(
        session,
        series_id=series.id,
        method=context.method.name,
        params=context.echoed,
        publication=publication,
        job_id=context.job_id,
    )
    if release.layout is not None:
        await storage.store_layout(session, model.id, release.layout)
    # The child's own bytes, for the series' next job (README, "How it works"; issue 21).
    await store_pack(session, model.id, computed.packed)
    # Rendered in the publication's transaction: no release is ever without its bytes.
    await store_release_documents(session, series.name, model, release)
    await storage.store_state(session, series.id, publication)
    if not private_terms <= set(series.private_terms):
        series.private_terms = sorted(private_terms)
    await session.flush()
    if computed.risk is not None:
        await store_risk_documents(session, series, model, release, computed.risk)
    return model.id


async def _fail(
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
    """Fail a job its publisher cancelled; requeue one the worker's shutdown interrupted."""
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

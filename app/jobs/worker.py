"""The procrastinate worker: in-process (FastAPI lifespan) or ``serialpub worker``.

Jobs of different series run at once (``SERIALPUB_WORKER_CONCURRENCY``, by default one per
core); the procrastinate lock keeps each series one job at a time, in posting order.

Jobs of a dead process are retried: at once when it ran on this host (a restart after a
crash), else when its heartbeat is older than ``SERIALPUB_STALLED_AFTER``. The job itself
counts its attempts and fails cleanly past ``SERIALPUB_JOB_MAX_ATTEMPTS``, and lists each
interruption.

A job's row follows the queue (:func:`reconcile_with_queue`): a job the queue ended or lost
without the job recording its outcome (a crash while the database was away, a full disk that
stopped PostgreSQL) is deferred again, or failed with its cause, within
``SERIALPUB_STALLED_AFTER``; no job stays ``running`` for a run that no longer exists.

The worker outlives database outages: procrastinate's statements wait them out
(:class:`app.queue.OutageTolerantJobManager`), and should its worker stop anyway, it is
started again (:func:`run_worker`).
"""

from __future__ import annotations

import asyncio
import os
import socket
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

import procrastinate
import procrastinate.exceptions
import psycopg
import psycopg.errors
import sqlalchemy
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.core.errors import ErrorCode
from app.db.engine import StorageState, database_size, is_transient, settings_warnings
from app.db.models import Job, Release
from app.db.raw import driver_connection
from app.db.repositories.jobs import JobRepository
from app.jobs.compute import ready_to_compute
from app.jobs.processes import current_process, is_dead_here
from app.jobs.publication import RUNNING, note_interruption
from app.jobs.task import RUNTIME_KEY, publish_release
from app.observability import DATABASE_FULL, DATABASE_SIZE, logger
from app.queue import QUEUE_NAME, REQUEUED_PRIORITY, defer_publication, open_queue
from app.runtime import Runtime
from app.services.publishing import CANCELLED

__all__ = [
    "check_server_settings",
    "reconcile_with_queue",
    "recover_stalled",
    "requeue_dead_here",
    "run_worker",
]

_log = logger("serialpub.worker")


async def recover_stalled(app: procrastinate.App, runtime: Runtime) -> int:
    """Requeue the jobs of dead workers; returns how many."""
    stalled = list(
        await app.job_manager.get_stalled_jobs(
            task_name=publish_release.name,
            seconds_since_heartbeat=runtime.settings.stalled_after_s,
        )
    )
    ids: list[int] = []
    for job in stalled:
        try:
            await app.job_manager.retry_job(job)
        except procrastinate.exceptions.ConnectorException:
            # Another worker's recovery requeued it first (the job is no longer "doing").
            _log.info("stalled job already requeued", procrastinate_id=job.id)
            continue
        if job.id is not None:
            ids.append(job.id)
    if ids:
        async with runtime.db.session() as session:
            for ours in await session.scalars(
                select(Job)
                .where(Job.procrastinate_job_id.in_(ids), Job.status == "running")
                .with_for_update(key_share=True)
            ):
                note_interruption(ours, "worker_stalled")
        _log.warning("requeued stalled jobs", procrastinate_ids=ids)
    return len(ids)


async def requeue_dead_here(runtime: Runtime) -> int:
    """Requeue, at once, the running jobs of processes of this host that are gone.

    A restart after a crash (or a sibling process that died) needs no heartbeat to know: the
    pid that ran the job no longer exists, or is another process.
    """
    async with runtime.db.session() as session:
        running = (
            await session.scalars(
                select(Job)
                .where(Job.status == "running")
                .with_for_update(skip_locked=True, key_share=True)
            )
        ).all()
        dead = [
            job
            for job in running
            if is_dead_here(job.worker_host, job.worker_pid, job.worker_started)
        ]
        if not dead:
            return 0
        conn = await driver_connection(session)
        ids = [job.procrastinate_job_id for job in dead]
        # Only procrastinate jobs still 'doing' (the stalled-job recovery may have been first).
        await conn.execute(
            "SELECT procrastinate_retry_job_v1(id, now(), NULL, NULL, NULL) "
            "FROM procrastinate_jobs WHERE id = ANY(%s) AND status = 'doing'",
            (ids,),
        )
        for job in dead:
            note_interruption(job, "worker_restarted")
        _log.warning(
            "requeued the jobs of a dead process of this host", jobs=[str(job.id) for job in dead]
        )
        return len(dead)


#: Jobs this process ran that the queue holds as ``doing`` with nobody running them, as seen
#: by a worker's last reconciliation: ``{job id: the queue's attempts}``. Acted on when seen
#: twice, so that a job the queue has just handed out, whose run has not started yet, is left
#: be. Each worker keeps its own (:func:`_recovery_loop`): one shared by two workers of one
#: process, on two databases, was cleared by the other's round and never saw a job twice.
Unrun = dict[uuid.UUID, int]

_LOST = """
SELECT j.id, p.status, p.attempts FROM jobs j
LEFT JOIN procrastinate_jobs p ON p.id = j.procrastinate_job_id
WHERE j.status IN ('queued', 'running') AND j.procrastinate_job_id IS NOT NULL
  AND (p.id IS NULL OR p.status NOT IN ('todo', 'doing')
       OR (p.status = 'doing' AND j.status = 'running'
           AND j.worker_host = %s AND j.worker_pid = %s))
"""


async def reconcile_with_queue(runtime: Runtime, seen: Unrun) -> int:
    """Bring the rows of jobs in line with the queue; returns how many were changed.

    A job ``queued`` or ``running`` whose queue job has ended (``failed``, ``succeeded``,
    ``aborted``, ``cancelled``) or is gone, or is ``doing`` for this process while this
    process runs no such job, lost its run without recording the outcome: its release, if
    it committed one, stands (the job succeeded); a cancelled one fails ``job_cancelled``;
    one past ``SERIALPUB_JOB_MAX_ATTEMPTS`` fails ``job_interrupted``; else it is queued
    again, ahead of the series' later posts (``queue_lost`` in its interruptions).
    """
    me = current_process()
    async with runtime.db.session() as session:
        conn = await driver_connection(session)
        cur = await conn.execute(_LOST, (me.host, me.pid))
        found = {uuid.UUID(str(r[0])): (r[1], r[2]) for r in await cur.fetchall()}
    unrun = {
        job_id: attempts
        for job_id, (status, attempts) in found.items()
        if status == "doing" and job_id not in RUNNING
    }
    stuck = {job_id for job_id, attempts in unrun.items() if seen.get(job_id) == attempts}
    seen.clear()
    seen.update({k: v for k, v in unrun.items() if k not in stuck})
    lost = [job_id for job_id, (status, _) in found.items() if status != "doing"]
    changed = 0
    for job_id in [*lost, *stuck]:
        async with runtime.db.session() as session:
            changed += await _reconcile(session, runtime, job_id, doing=job_id in stuck)
    return changed


#: Runs the queue may end before a job starts, in a row, before the job fails
#: ``job_interrupted``: ten rounds of the reconciliation (``SERIALPUB_STALLED_AFTER`` apart).
LOST_BEFORE_START_LIMIT = 10


async def _reconcile(
    session: AsyncSession, runtime: Runtime, job_id: uuid.UUID, *, doing: bool
) -> int:
    repo = JobRepository(session)
    job = await repo.get(job_id, for_update=True)
    if job is None or job.status not in ("queued", "running") or job_id in RUNNING:
        return 0
    conn = await driver_connection(session)
    # Again, under the row's lock: another worker's reconciliation may have been first.
    cur = await conn.execute(
        "SELECT status FROM procrastinate_jobs WHERE id = %s", (job.procrastinate_job_id,)
    )
    row = await cur.fetchone()
    queue_status = row[0] if row else None
    if queue_status in ("todo", "doing") and not (doing and queue_status == "doing"):
        return 0
    release_no = job.release_no or await session.scalar(
        select(Release.release_no).where(Release.job_id == job.id)
    )
    if release_no is not None:
        await repo.finish(job, "succeeded", release_no=release_no, phase="store", progress=1.0)
        _log.warning("job's release was committed before the queue lost it", job_id=str(job_id))
        return 1
    if job.cancel_requested_at is not None:
        await repo.finish(job, "failed", error=CANCELLED)
        return 1
    # Runs the queue ended before the job's code started one (the attempt count did not
    # move): a task failing at once would otherwise be queued again forever. The limit is
    # rounds, not attempts: a run that ends before it starts also happens, a few times, when a
    # worker stops or the database restarts under it (a restart test met three in 4 s).
    unstarted = sum(
        1
        for i in job.interruptions or []
        if i.get("reason") == "queue_lost" and i.get("attempt") == job.attempts
    )
    max_attempts = runtime.settings.job_max_attempts
    if job.attempts >= max_attempts or unstarted >= LOST_BEFORE_START_LIMIT:
        await repo.finish(
            job,
            "failed",
            error={
                "code": ErrorCode.JOB_INTERRUPTED,
                "message": f"the job was interrupted {job.attempts + unstarted} times; giving up",
                "details": {"attempts": job.attempts, "lost_before_start": unstarted},
            },
        )
        return 1
    if await repo.payload(job.id) is None:
        await repo.finish(
            job,
            "failed",
            error={
                "code": ErrorCode.JOB_INPUT_MISSING,
                "message": "the queue lost the job and its input is gone",
                "details": {},
            },
        )
        return 1
    if doing:
        # Still 'doing' in the queue, under a worker that runs no such job: back to 'todo'.
        await conn.execute(
            "SELECT procrastinate_retry_job_v1(%s, now(), NULL, NULL, NULL)",
            (job.procrastinate_job_id,),
        )
    else:
        job.procrastinate_job_id = await defer_publication(
            conn, job.id, job.series_id, dry_run=job.dry_run, priority=REQUEUED_PRIORITY
        )
    note_interruption(job, "queue_lost")
    _log.warning("the queue lost the job's run; queued again", job_id=str(job_id))
    return 1


async def observe_database(runtime: Runtime) -> None:
    """``serialpub_database_size_bytes`` and ``serialpub_database_full`` (for a ``serialpub
    worker``'s own /metrics)."""
    async with runtime.db.connect() as conn:
        DATABASE_SIZE.set(await database_size(conn))
        DATABASE_FULL.set(await StorageState.full(conn) is not None)


async def check_server_settings(runtime: Runtime) -> list[str]:
    """Log a warning for each PostgreSQL timeout set lower than the service needs."""
    async with runtime.db.connect() as conn:
        warnings = await settings_warnings(conn)
    for warning in warnings:
        _log.warning(warning)
    return warnings


async def _recovery_loop(app: procrastinate.App, runtime: Runtime) -> None:
    seen: Unrun = {}
    while True:
        steps: list[Callable[[], Awaitable[object]]] = [
            lambda: requeue_dead_here(runtime),
            lambda: recover_stalled(app, runtime),
            lambda: reconcile_with_queue(runtime, seen),
            lambda: observe_database(runtime),
        ]
        for step in steps:
            try:
                await step()
            except Exception as exc:  # a database fault must not stop the worker
                if is_transient(exc):
                    _log.warning("job recovery skipped: database unavailable")
                else:
                    _log.exception("job recovery failed")
        _raise_if_cancelled()
        await asyncio.sleep(runtime.settings.stalled_after_s)


def _raise_if_cancelled() -> None:
    """Raise the cancellation of the current task if a library lost it.

    On Python 3.11, ``asyncio.wait_for`` returns its result when the awaited future completes
    in the same loop iteration as the cancellation of the task that waits (CPython gh-86296,
    fixed in 3.12), and psycopg_pool waits for a connection so. Cancelled while procrastinate
    took a pool connection, the stalled-job recovery went on to ``asyncio.sleep`` as if never
    cancelled (its ``cancelling()`` count still 1 there), and a ``serve`` worker outlived its
    parent. With ``serve --workers 2``, SIGTERM 3-9 s after start and two busy loops beside
    it: 14 of 56 starts before this check, 0 of 32 with it. A task that is cancelling and goes
    on has lost a cancellation."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


#: Seconds between two touches of ``SERIALPUB_WORKER_HEARTBEAT_FILE``.
LIVENESS_INTERVAL_S = 10.0


async def _liveness_loop(runtime: Runtime, path: Path) -> None:
    """Touch ``path`` while the event loop runs and the database answers.

    A worker serves no HTTP; its container's health check (``serialpub healthcheck
    --worker``) reads the file's age instead. A hung loop or a lost database lets it age.
    """
    while True:
        try:
            async with runtime.db.connect() as conn:
                await conn.execute(sqlalchemy.text("SELECT 1"))
            path.touch()
        except Exception:  # the file ages and the check fails; the worker itself goes on
            _log.exception("worker liveness check failed")
        _raise_if_cancelled()
        await asyncio.sleep(LIVENESS_INTERVAL_S)


#: Seconds the side tasks (recovery, liveness) have to end once cancelled.
SIDE_TASK_STOP_S = 5.0


async def _stop_side_tasks(tasks: list[asyncio.Task[None]]) -> None:
    """Cancel the side tasks and wait for them at most :data:`SIDE_TASK_STOP_S`.

    Waiting without a bound could keep a process from ever exiting. A SIGTERM that reached a
    uvicorn worker while it was still starting left one of them unfinished after its
    cancellation, in about 1 start in 8, and the process stayed up after its parent was gone
    (``tests/deploy/test_password_file.py`` hung in CI's full run twice on 2026-11-27). The
    cause was a lost cancellation (:func:`_raise_if_cancelled`); the bound stays for whatever
    else may lose one, and the warning says where each task waits. Left pending, they end
    with the process."""
    for task in tasks:
        task.cancel()
    if not tasks:
        return
    _, pending = await asyncio.wait(tasks, timeout=SIDE_TASK_STOP_S)
    if pending:
        _log.warning(
            "side tasks still running after cancellation; leaving them",
            tasks=sorted(task.get_name() for task in pending),
            # Where each one waits: what an operator (or the next engineer) needs to know why.
            waiting_in={task.get_name(): _where(task) for task in pending},
        )


def _where(task: asyncio.Task[None]) -> str:
    """The chain of awaits a pending task is suspended in, outermost first, as ``file:line
    function`` (``Task.get_stack`` gives only the outermost frame of a suspended task)."""
    parts: list[str] = []
    awaited: Any = task.get_coro()
    while awaited is not None and len(parts) < 16:
        frame = getattr(awaited, "cr_frame", None) or getattr(awaited, "gi_frame", None)
        if frame is not None:
            name = frame.f_code.co_filename.rsplit("/", 1)[-1]
            parts.append(f"{name}:{frame.f_lineno} {frame.f_code.co_name}")
        awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "gi_yieldfrom", None)
    return " -> ".join(parts)


async def _until_stopped(run_worker: Coroutine[Any, Any, None], grace_s: float) -> None:
    """Run procrastinate's worker; once cancelled, see that it stops.

    Cancelled, procrastinate's worker stops gracefully (running jobs get ``grace_s``). A
    cancellation that lands while it starts, in a pool's connection wait, can be lost on
    Python 3.11 (:func:`_raise_if_cancelled`): the worker then runs on, and its caller waits
    for ever (a test that cancelled its worker hung 7 minutes, its heartbeat still beating).
    So the cancellation is sent again when the first did not end it in the grace time, and
    after that the worker is left to end with the process."""
    task = asyncio.create_task(run_worker, name="procrastinate worker")
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if task.done() and (current is None or not current.cancelling()):
            # The worker's own task ended cancelled, not this one: it stopped by itself, and
            # returning as if cancelled would end the caller's worker without a word.
            raise RuntimeError("procrastinate's worker was cancelled from inside") from None
        for wait_s in (grace_s + SIDE_TASK_STOP_S, SIDE_TASK_STOP_S):
            task.cancel()
            done, _ = await asyncio.wait({task}, timeout=wait_s)
            if done:
                break
        else:
            _log.warning("job worker still running after cancellation; leaving it")
        raise


def _taken_back(exc: BaseException) -> str | None:
    """What the queue took back from procrastinate's worker, when that is why it stopped:
    ``"job"``, ``"worker"`` or ``None``.

    - A job: the stalled-job recovery takes back the jobs of a worker whose heartbeat is late;
      a worker starved of CPU (a full test suite beside two benchmarks) was still running one,
      and its ``procrastinate_finish_job`` then raised "Job was not found or not in "doing" or
      "todo" status".
    - The worker itself: every worker that starts prunes the workers whose heartbeat is older
      than ``SERIALPUB_STALLED_AFTER``; a pruned worker goes on beating (an update of no row)
      until it fetches a job, which its missing row refuses (``procrastinate_jobs_worker_id_
      fkey``). A test that blocked its event loop, then started a worker, left the suite's
      in-process worker so: every later post stayed queued.

    Either way procrastinate's worker stops, and the jobs are the service's own (their rows,
    the reconciliation): the worker starts again, registered anew, rather than stop serving."""
    cause: BaseException | None = exc
    for _ in range(8):  # a chain, not a cycle
        if cause is None:
            break
        if isinstance(cause, psycopg.errors.RaiseException) and "Job was not found" in str(cause):
            return "job"
        if isinstance(cause, psycopg.errors.ForeignKeyViolation) and (
            cause.diag.constraint_name == _WORKER_FKEY or _WORKER_FKEY in str(cause)
        ):
            return "worker"
        cause = cause.__cause__ or cause.__context__
    return None


#: The queue's reference from a running job to the worker that fetched it.
_WORKER_FKEY = "procrastinate_jobs_worker_id_fkey"


#: Seconds before procrastinate's worker is started again after it stopped on an error.
_RESTART_S = (1.0, 2.0, 5.0, 10.0)


async def run_worker(
    runtime: Runtime, *, install_signal_handlers: bool = False, wait: bool = True
) -> None:
    """Run jobs until cancelled (or, with ``wait=False``, until the queue is empty)."""
    settings = runtime.settings
    name = f"{socket.gethostname()}-{os.getpid()}"
    concurrency = settings.job_concurrency
    # Before the first fetch: a restart takes its crashed predecessor's jobs back first.
    await requeue_dead_here(runtime)
    await check_server_settings(runtime)
    await ready_to_compute()
    async with open_queue(runtime.db.url, max_size=concurrency + 3) as app:
        recovery = asyncio.create_task(_recovery_loop(app, runtime), name="stalled-job recovery")
        side = [recovery]
        if settings.worker_heartbeat_file is not None:
            side.append(
                asyncio.create_task(
                    _liveness_loop(runtime, settings.worker_heartbeat_file), name="liveness"
                )
            )
        try:
            restarts = 0
            while True:
                try:
                    await _until_stopped(
                        app.run_worker_async(
                            queues=[QUEUE_NAME],
                            name=name,
                            additional_context={RUNTIME_KEY: runtime},
                            concurrency=concurrency,
                            wait=wait,
                            install_signal_handlers=install_signal_handlers,
                            fetch_job_polling_interval=1.0,
                            abort_job_polling_interval=5.0,
                            update_heartbeat_interval=min(10.0, settings.stalled_after_s / 3),
                            stalled_worker_timeout=settings.stalled_after_s,
                            delete_jobs="successful",
                            # Then running jobs are cancelled and requeued (the task's retry
                            # strategy).
                            shutdown_graceful_timeout=settings.shutdown_grace_s,
                        ),
                        settings.shutdown_grace_s,
                    )
                    return
                except procrastinate.exceptions.ConnectorException as exc:
                    # procrastinate's worker stops when a statement of its own fails (its
                    # job manager waits outages out first): a service with no worker left
                    # would take posts and never run them.
                    taken_back = _taken_back(exc)
                    if not wait or not (is_transient(exc) or taken_back):
                        raise
                    delay = _RESTART_S[min(restarts, len(_RESTART_S) - 1)]
                    _log.warning(
                        "job worker stopped; restarting",
                        after=delay,
                        cause=f"{taken_back} taken back" if taken_back else "database unavailable",
                    )
                    restarts += 1
                    await asyncio.sleep(delay)
        finally:
            await _stop_side_tasks(side)

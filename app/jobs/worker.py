"""The procrastinate worker: in-process (FastAPI lifespan) or ``serialpub worker``.

Jobs of different series run at once (``SERIALPUB_WORKER_CONCURRENCY``, by default one per
core); the procrastinate lock keeps each series one job at a time, in posting order.

Jobs of a dead process are retried: at once when it ran on this host (a restart after a
crash), else when its heartbeat is older than ``SERIALPUB_STALLED_AFTER``. The job itself
counts its attempts and fails cleanly past ``SERIALPUB_JOB_MAX_ATTEMPTS``, and lists each
interruption.
"""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path
from typing import Any

import procrastinate
import procrastinate.exceptions
import sqlalchemy
from sqlalchemy import select

from app.db.models import Job
from app.db.raw import driver_connection
from app.jobs.compute import preload
from app.jobs.processes import is_dead_here
from app.jobs.publication import note_interruption
from app.jobs.queue import QUEUE_NAME, open_queue
from app.jobs.task import publish_release
from app.observability import logger
from app.runtime import Runtime

__all__ = ["run_worker", "recover_stalled", "requeue_dead_here"]

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


async def _recovery_loop(app: procrastinate.App, runtime: Runtime) -> None:
    while True:
        try:
            await requeue_dead_here(runtime)
            await recover_stalled(app, runtime)
        except Exception:  # a transient database error must not stop the worker
            _log.exception("stalled-job recovery failed")
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


async def run_worker(
    runtime: Runtime, *, install_signal_handlers: bool = False, wait: bool = True
) -> None:
    """Run jobs until cancelled (or, with ``wait=False``, until the queue is empty)."""
    settings = runtime.settings
    name = f"{socket.gethostname()}-{os.getpid()}"
    concurrency = settings.job_concurrency
    # Before the first fetch: a restart takes its crashed predecessor's jobs back first.
    await requeue_dead_here(runtime)
    await asyncio.to_thread(preload)
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
            await app.run_worker_async(
                queues=[QUEUE_NAME],
                name=name,
                concurrency=concurrency,
                wait=wait,
                install_signal_handlers=install_signal_handlers,
                fetch_job_polling_interval=1.0,
                abort_job_polling_interval=5.0,
                update_heartbeat_interval=min(10.0, settings.stalled_after_s / 3),
                stalled_worker_timeout=settings.stalled_after_s,
                delete_jobs="successful",
                # Then running jobs are cancelled and requeued (the task's retry strategy).
                shutdown_graceful_timeout=settings.shutdown_grace_s,
            )
        finally:
            await _stop_side_tasks(side)

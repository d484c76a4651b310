"""The procrastinate worker: in-process (FastAPI lifespan) or ``serialpub worker``.

Stalled jobs (running on a worker whose heartbeat stopped: a crash, a kill) are retried; the
job itself counts its attempts and fails cleanly past ``SERIALPUB_JOB_MAX_ATTEMPTS``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket

import procrastinate
import procrastinate.exceptions
from sqlalchemy import update

from app.db.models import Job
from app.observability import logger
from app.runtime import Runtime
from app.tasks import QUEUE_NAME, open_queue, publish_release

__all__ = ["run_worker", "recover_stalled"]

_log = logger("serialpub.worker")


async def recover_stalled(app: procrastinate.App, runtime: Runtime) -> int:
    """Requeue the jobs of dead workers; returns how many."""
    stalled = list(await app.job_manager.get_stalled_jobs(
        task_name=publish_release.name,
        seconds_since_heartbeat=runtime.settings.stalled_after_s,
    ))
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
            await session.execute(
                update(Job)
                .where(Job.procrastinate_job_id.in_(ids), Job.status == "running")
                .values(status="queued", phase=None, progress=0.0)
            )
        _log.warning("requeued stalled jobs", procrastinate_ids=ids)
    return len(ids)


async def _recovery_loop(app: procrastinate.App, runtime: Runtime) -> None:
    while True:
        try:
            await recover_stalled(app, runtime)
        except Exception:  # a transient database error must not stop the worker
            _log.exception("stalled-job recovery failed")
        await asyncio.sleep(runtime.settings.stalled_after_s)


async def run_worker(runtime: Runtime, *, install_signal_handlers: bool = False,
                     wait: bool = True) -> None:
    """Run jobs until cancelled (or, with ``wait=False``, until the queue is empty)."""
    settings = runtime.settings
    name = f"{socket.gethostname()}-{os.getpid()}"
    async with open_queue(runtime.db.url, max_size=settings.worker_concurrency + 3) as app:
        recovery = asyncio.create_task(_recovery_loop(app, runtime))
        try:
            await app.run_worker_async(
                queues=[QUEUE_NAME],
                name=name,
                concurrency=settings.worker_concurrency,
                wait=wait,
                install_signal_handlers=install_signal_handlers,
                fetch_job_polling_interval=1.0,
                abort_job_polling_interval=5.0,
                update_heartbeat_interval=min(10.0, settings.stalled_after_s / 3),
                stalled_worker_timeout=settings.stalled_after_s,
                delete_jobs="successful",
            )
        finally:
            recovery.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await recovery

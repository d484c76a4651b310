"""The job queue (procrastinate, in PostgreSQL): opening it and deferring a publication.

Below the services, which defer jobs through it (:func:`submit`) by the task's name; the task
itself (what a worker runs: :func:`app.jobs.task.publish_release`, calling the services) is
registered by :mod:`app.jobs.task`, which procrastinate imports when the queue opens
(``import_paths``, a name, not an import of this module's), so that no service imports the
job worker above it.

The queue rides out database outages (:class:`OutageTolerantJobManager`): procrastinate's
worker stops as soon as one of its side tasks (the heartbeat, the listener) or its fetch
fails, and a restart of PostgreSQL longer than its pool's wait did that, leaving the
service with no worker at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Iterable
from typing import Any

import procrastinate
import procrastinate.exceptions
import procrastinate.jobs
import procrastinate.manager
import psycopg

from app.db.embedded import libpq_url
from app.db.engine import is_transient
from app.observability import logger

__all__ = [
    "PUBLISH_TASK",
    "QUEUE_NAME",
    "REQUEUED_PRIORITY",
    "OutageTolerantJobManager",
    "defer_publication",
    "open_queue",
    "queue",
    "submit",
]

QUEUE_NAME = "publish"
#: The name :mod:`app.jobs.task` registers the publication task under.
PUBLISH_TASK = "serialpub.publish_release"
#: The priority of a job the queue lost and the worker deferred again: above every job posted
#: since (priority 0), which procrastinate's lock would otherwise let run first, so that
#: releases keep their posting order.
REQUEUED_PRIORITY = 1

_log = logger("serialpub.queue")

#: Seconds between two tries of a queue statement the database did not answer.
_RETRY_S = (0.5, 1.0, 2.0, 5.0)
#: Seconds the end of a job (its status in the queue) is retried through an outage.
_FINISH_WINDOW_S = 120.0


class OutageTolerantJobManager(procrastinate.manager.JobManager):
    """procrastinate's job manager, for a worker that outlives database outages.

    - A heartbeat the database did not take is skipped (logged): the worker's heartbeat ages,
      which is what the stalled-job recovery is for, and the worker goes on.
    - A fetch the database did not answer finds no job; the worker polls again.
    - The listener reconnects, waiting out the outage (jobs are polled meanwhile).
    - A job's end (succeeded, failed, retried) is written again until the database takes it,
      for a while: otherwise the job stayed ``doing`` under a live worker for good.
    """

    async def update_heartbeat(self, worker_id: int) -> None:
        try:
            await super().update_heartbeat(worker_id)
        except procrastinate.exceptions.ConnectorException as exc:
            if not is_transient(exc):
                raise
            _log.warning("worker heartbeat not recorded: database unavailable")

    async def fetch_job(
        self, queues: Iterable[str] | None, worker_id: int
    ) -> procrastinate.jobs.Job | None:
        try:
            return await super().fetch_job(queues, worker_id)
        except procrastinate.exceptions.ConnectorException as exc:
            if not is_transient(exc):
                raise
            _log.warning("no job fetched: database unavailable")
            return None

    async def listen_for_jobs(self, **kwargs: Any) -> None:
        tries = 0
        while True:
            try:
                await super().listen_for_jobs(**kwargs)
                return
            except procrastinate.exceptions.ConnectorException as exc:
                if not is_transient(exc):
                    raise
                _log.warning("job listener lost its connection; reconnecting")
            await asyncio.sleep(_RETRY_S[min(tries, len(_RETRY_S) - 1)])
            tries += 1

    async def finish_job_by_id_async(self, *args: Any, **kwargs: Any) -> None:
        await _waiting_out(
            lambda: super(OutageTolerantJobManager, self).finish_job_by_id_async(*args, **kwargs)
        )

    async def retry_job_by_id_async(self, *args: Any, **kwargs: Any) -> None:
        await _waiting_out(
            lambda: super(OutageTolerantJobManager, self).retry_job_by_id_async(*args, **kwargs)
        )


async def _waiting_out(statement: Any) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + _FINISH_WINDOW_S
    tries = 0
    while True:
        try:
            await statement()
            return
        except procrastinate.exceptions.ConnectorException as exc:
            if not is_transient(exc) or loop.time() >= deadline:
                raise
            _log.warning("job's end not recorded in the queue yet: database unavailable")
        await asyncio.sleep(_RETRY_S[min(tries, len(_RETRY_S) - 1)])
        tries += 1


queue = procrastinate.App(
    connector=procrastinate.PsycopgConnector(), import_paths=["app.jobs.task"]
)
queue.job_manager = OutageTolerantJobManager(queue.connector)


@contextlib.asynccontextmanager
async def open_queue(database_url: str, *, max_size: int = 4) -> AsyncIterator[procrastinate.App]:
    """Open the queue on a fresh connection pool, in an app of its own (one per runtime).

    Each runtime gets its own procrastinate ``App`` with the module's tasks
    (``App.with_connector``), never the module's app with its connector swapped
    (``replace_connector``): two runtimes in one process (an API's in-process worker beside
    another's, as in the tests) shared the one app, whose connector was whichever opened
    last, so a worker fetched the other database's jobs and ran them against its own, where
    they did not exist ("ended with status: Success" in 4 ms, the job lost and queued again
    until it failed), while its own database's jobs waited for ever."""
    connector = procrastinate.PsycopgConnector(
        conninfo=libpq_url(database_url), min_size=1, max_size=max_size
    )
    app = queue.with_connector(connector)
    app.job_manager = OutageTolerantJobManager(connector)
    async with app.open_async():
        yield app


async def defer_publication(
    connection: psycopg.AsyncConnection[object],
    job_id: uuid.UUID,
    series_id: int,
    *,
    dry_run: bool = False,
    priority: int = 0,
) -> int:
    """Defer the job inside the caller's transaction (a rollback leaves no job).

    The procrastinate ``lock`` makes the publications of one series run one at a time, in
    the order they were created (for one ``priority``: a higher one runs first). A dry run
    takes no lock: it stores nothing, so it neither waits for the series' queued
    publications nor holds them up. The task is found by name (``allow_unknown=False``:
    the queue imports :mod:`app.jobs.task` first, and a missing registration fails here,
    not in a worker).
    """
    return await queue.configure_task(
        PUBLISH_TASK,
        allow_unknown=False,
        queue=QUEUE_NAME,
        lock=None if dry_run else f"series:{series_id}",
        priority=priority,
        connection=connection,
    ).defer_async(job_id=str(job_id))


async def submit(
    connection: psycopg.AsyncConnection[object],
    job_id: uuid.UUID,
    series_id: int,
    *,
    dry_run: bool = False,
) -> int:
    """Queue the publication (or ``dry_run``) of job ``job_id`` in the caller's transaction
    (a rollback leaves no job); returns the procrastinate job's id. The publications of a
    series run one at a time, in the order they were submitted; dry runs beside them
    (docs/api-releases.md "POST /v1/series/{name}/releases")."""
    return await defer_publication(connection, job_id, series_id, dry_run=dry_run)

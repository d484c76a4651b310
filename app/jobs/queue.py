"""The job queue (procrastinate, in PostgreSQL): opening it and deferring a publication.

Below the services, which defer jobs through it (:func:`app.jobs.submit`) by the task's name;
the task itself (what a worker runs: :func:`app.jobs.task.publish_release`, calling the
services) is registered by :mod:`app.jobs.task`, which the queue imports when it opens
(``import_paths``), so that no service imports the layer above it.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator

import procrastinate
import psycopg

from app.db.embedded import libpq_url

__all__ = ["PUBLISH_TASK", "QUEUE_NAME", "defer_publication", "open_queue", "queue"]

QUEUE_NAME = "publish"
#: The name :mod:`app.jobs.task` registers the publication task under.
PUBLISH_TASK = "serialpub.publish_release"

queue = procrastinate.App(
    connector=procrastinate.PsycopgConnector(), import_paths=["app.jobs.task"]
)


@contextlib.asynccontextmanager
async def open_queue(database_url: str, *, max_size: int = 4) -> AsyncIterator[procrastinate.App]:
    """Open the queue on a fresh connection pool (one per runtime, so tests can reopen)."""
    connector = procrastinate.PsycopgConnector(
        conninfo=libpq_url(database_url), min_size=1, max_size=max_size
    )
    with queue.replace_connector(connector):
        async with queue.open_async():
            yield queue


async def defer_publication(
    connection: psycopg.AsyncConnection[object],
    job_id: uuid.UUID,
    series_id: int,
    *,
    dry_run: bool = False,
) -> int:
    """Defer the job inside the caller's transaction (a rollback leaves no job).

    The procrastinate ``lock`` makes the publications of one series run one at a time, in
    the order they were created. A dry run takes no lock: it stores nothing, so it neither
    waits for the series' queued publications nor holds them up. The task is found by name
    (``allow_unknown=False``: the queue imports :mod:`app.jobs.task` first, and a missing
    registration fails here, not in a worker).
    """
    return await queue.configure_task(
        PUBLISH_TASK,
        allow_unknown=False,
        queue=QUEUE_NAME,
        lock=None if dry_run else f"series:{series_id}",
        connection=connection,
    ).defer_async(job_id=str(job_id))

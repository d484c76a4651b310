"""The job worker (issue 22 item 2): the queue, the steps of a publication job, its progress,
the compute child and its hand-off, and the worker's loop.

This face is the one thing the services call: :func:`submit` defers a publication job inside
the caller's transaction. It imports only :mod:`app.jobs.queue` (procrastinate and the
database), so a service importing it closes no circle; the rest of the package sits above
the services and calls them (README, "How it works"; ``tests/test_layers.py``):

- :mod:`app.jobs.queue`: the procrastinate app, opening it, deferring by the task's name;
- :mod:`app.jobs.task`: the task a worker runs, registered on the queue;
- :mod:`app.jobs.context`: what a job carries, built once (:class:`~app.jobs.context.JobContext`);
- :mod:`app.jobs.publication`: the steps of a publication job, one transaction for the release;
- :mod:`app.jobs.audit`: the semantic audit, its own step after the release is committed;
- :mod:`app.jobs.progress`: the job's phase and progress, written to its row;
- :mod:`app.jobs.compute`, :mod:`app.jobs.handoff`: the core in a child process, and its input;
- :mod:`app.jobs.processes`: which process runs a job, and whether it is alive;
- :mod:`app.jobs.worker`: the worker (in-process or ``serialpub worker``) and job recovery.
"""

from __future__ import annotations

import uuid

import psycopg

from app.jobs.queue import defer_publication

__all__ = ["submit"]


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
    (docs/api.md "POST /v1/series/{name}/releases")."""
    return await defer_publication(connection, job_id, series_id, dry_run=dry_run)

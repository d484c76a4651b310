"""The publication job's store: one short transaction that checks the series has not moved,
stores the release and finishes the job (design.md §3: releases numbered without gaps).

The job computed against the history it read in a transaction of its own, committed before
the computation (:mod:`app.jobs.publication`); the series' session lock
(:class:`app.db.locks.SessionLock`) kept other publications of the series out meanwhile. The
lock is lost if its connection is (a restart, a cut path), so the store does not trust it:
it locks the series' row and compares the series' releases with those the job read. Another
release in between (:class:`SeriesMoved`) sends the job back to read and compute again.

Run again after a transient fault (:mod:`app.jobs.outages`), the store first looks for a
release of this job: a commit whose answer was lost on the way back did happen, and the
release is stored once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.core.errors import ErrorCode
from app.db.locks import SessionLock
from app.db.models import Release, Series
from app.db.repositories.jobs import JobRepository
from app.db.repositories.release_packs import store_pack
from app.db.repositories.release_store import store_publication
from app.errors import AppError
from app.jobs.audit import ATTACK_PHASE, AUDIT_START
from app.jobs.compute import Computed
from app.jobs.context import JobContext
from app.methods.storage import storage_of
from app.observability import logger
from app.runtime import Runtime
from app.services.access_trail import record_publication
from app.services.renderings import (
    render_release_documents,
    store_release_documents,
    store_risk_documents,
)

__all__ = ["SeriesMoved", "Stored", "store_release"]

_log = logger("serialpub.jobs")


class SeriesMoved(Exception):
    """The series has releases other than those the job computed against."""


@dataclass(frozen=True, slots=True)
class Stored:
    release_id: int
    #: ``False`` when an earlier try had stored it (its commit's answer was lost).
    now: bool


async def store_release(
    runtime: Runtime,
    lock: SessionLock,
    context: JobContext,
    computed: Computed,
    report: Any,
    seconds: Callable[[], dict[str, float]],
) -> Stored:
    """Store ``computed`` as the series' next release and, in the same transaction, mark the
    job succeeded with ``report`` and its ``seconds()`` by phase, taken once the release is
    stored (an audited job stays running, in phase ``attack``, until its audit ends)."""
    if not await lock.ensure():
        # Taken again after its connection was lost: the check below decides.
        _log.warning("the series' lock was lost while the job computed; the store checks")
    async with runtime.db.session() as session:
        repo = JobRepository(session)
        job = await repo.get(context.job_id, for_update=True)
        if job is None:
            raise AppError("the job is gone", code=ErrorCode.JOB_INPUT_MISSING)
        earlier = await session.scalar(select(Release.id).where(Release.job_id == job.id))
        if earlier is not None:
            return Stored(earlier, now=False)
        series = await session.get(Series, context.series.id, with_for_update={"key_share": True})
        if series is None:
            raise AppError("the job's series is gone", code=ErrorCode.JOB_INPUT_MISSING)
        releases = await session.scalars(
            select(Release.id).where(Release.series_id == series.id).order_by(Release.release_no)
        )
        if tuple(releases) != context.release_ids:
            raise SeriesMoved(f"series {series.name!r} has releases the job did not read")
        release_id = await _store(session, series, context, computed)
        # Committed with the release: a full disk met by any process is over.
        await runtime.db.storage.stored(session)
        release_no = computed.publication.release.release_no
        # The trail names the release and its poster with the release, in its transaction.
        await record_publication(session, job.api_key_id, series.name, release_no, job.id)
        if context.audit.enabled:
            # Committed with the release, still running: the audit needs the raw snapshot
            # (its ground truth), which ``finish`` drops, and the job ends when the audit does.
            job.release_no, job.report = release_no, report
            job.phase, job.progress = ATTACK_PHASE, AUDIT_START
            await session.flush()
        else:
            await repo.finish(
                job,
                "succeeded",
                release_no=release_no,
                report=report,
                phase_seconds=seconds(),
                phase="store",
                progress=1.0,
            )
    return Stored(release_id, now=True)


async def _store(
    session: AsyncSession, series: Series, context: JobContext, computed: Computed
) -> int:
    publication, private_terms = computed.publication, computed.private_terms
    release = publication.release
    storage = storage_of(context.method)
    # The renderings (orjson, then gzip and sha256 in threads that release the interpreter
    # lock) are made while PostgreSQL takes the rows in: the COPY waits on the server, which
    # the rendering does not need. Stored below, in this transaction, as before.
    rendering = asyncio.ensure_future(
        asyncio.to_thread(
            partial(
                render_release_documents,
                series.name,
                context.method.name,
                context.echoed,
                release,
                release_no=release.release_no,
                label=release.label,
            )
        )
    )
    try:
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
        # The child's own bytes, for the series' next job (docs/architecture.md).
        await store_pack(session, model.id, computed.packed)
        # Stored in the publication's transaction: no release is ever without its bytes.
        await store_release_documents(session, series.name, model, release, rendering)
    finally:
        # A store that failed (and runs again) does not wait for its rendering.
        rendering.cancel()
    await storage.store_state(session, series.id, publication)
    if not private_terms <= set(series.private_terms):
        series.private_terms = sorted(private_terms)
    await session.flush()
    if computed.risk is not None:
        await store_risk_documents(session, series, model, release, computed.risk)
    return model.id

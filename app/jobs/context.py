"""What a publication job carries: its series, its method's registry entry,
the effective parameters and the series' history, built once when the job holds the series'
lock and handed to each step, so that no step looks the method up again.

The release's numbering and guarantee depend on the history being the one read under the
lock (docs/architecture.md: the job takes a per-series advisory lock, loads the history,
publishes, stores): the context is built after that lock, in the publication's transaction.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.core.attacks.settings import AuditSettings
from app.core.history import SeriesHistory
from app.core.methods import Method
from app.db.models import Job, Series
from app.db.repositories.release_load import RELEASE_CACHE
from app.jobs.handoff import HandOff, pack_history, pack_state
from app.methods.registry import get_method
from app.services.history import PackedHistory, load_keyed_history, load_packed_history
from app.services.risk import default_r_th
from app.services.semantic_audit import audit_settings
from app.services.series import echoed_params, effective_params

__all__ = ["JobContext", "build_context", "build_handoff"]


@dataclass(frozen=True, slots=True)
class JobContext:
    """One publication job's inputs, read once (design.md §11 for ``audit``)."""

    job_id: uuid.UUID
    #: The series row, loaded in the publication's transaction.
    series: Series
    #: The series' method: its registry entry, looked up once.
    method: Method
    #: The effective parameters, as the method parses them (what the core receives).
    params: Any
    #: The parameters the release echoes (``method.echo`` of ``params``).
    echoed: dict[str, Any]
    #: The series' semantic audit (disabled when absent): run after the release commits.
    audit: AuditSettings
    #: The series' past, oldest release first, as read under the series' lock: each release
    #: as a compute child packed it (``packed``), or, when a release stored before packs were
    #: kept has none, every release read into objects (``history``); the other is ``None``.
    history: SeriesHistory | None
    packed: PackedHistory | None
    #: The past releases' primary keys, in the history's order (the worker's cache keys).
    release_ids: tuple[int, ...]
    #: The release's label, and the private terms the upload added (the job's row).
    label: str | None
    extra_private_terms: tuple[str, ...]


async def build_context(session: AsyncSession, job: Job, series: Series) -> JobContext:
    """The context of ``job``, whose series' lock ``session`` holds; loads the history."""
    method = get_method(series.method)
    history: SeriesHistory | None = None
    packed = await load_packed_history(session, series, method, RELEASE_CACHE.get_packed)
    if packed is None:
        history, release_ids = await load_keyed_history(session, series, method)
    else:
        release_ids = packed.release_ids
    return JobContext(
        job_id=job.id,
        series=series,
        method=method,
        params=effective_params(series, method),
        echoed=echoed_params(series, method),
        audit=audit_settings(series),
        history=history,
        packed=packed,
        release_ids=tuple(release_ids),
        label=job.label,
        extra_private_terms=tuple(job.extra_private_terms),
    )


async def build_handoff(payload: bytes, context: JobContext) -> HandOff:
    """The compute child's input for ``context``'s job (a publication or a dry run). Past
    releases this worker has packed before (or whose child packed them) are reused; the
    others are packed now, off the event loop, and kept beside the cached releases for the
    series' next job."""
    if context.packed is not None:
        releases, state = context.packed.releases, pack_state(context.packed.state)
    else:
        assert context.history is not None
        cached = [RELEASE_CACHE.get_packed(i) for i in context.release_ids]
        releases, state = await asyncio.to_thread(pack_history, context.history, cached)
        for release_id, old, blob in zip(context.release_ids, cached, releases, strict=True):
            if old is None:
                RELEASE_CACHE.put_packed(release_id, blob)
    series = context.series
    return HandOff(
        method=context.method.name,
        params=context.params,
        payload=payload,
        series_terms=list(series.private_terms),
        extra_terms=list(context.extra_private_terms),
        private_match=series.private_match,  # type: ignore[arg-type]
        releases=releases,
        state=state,
        label=context.label,
        risk_r_th=default_r_th(series),
    )

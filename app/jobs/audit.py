"""The publication job's semantic audit (design.md §11): the attack each publication
job runs while the raw snapshot still exists, and the report it keeps for auditors (the
series' settings and background, and reading the report: :mod:`app.services.semantic_audit`).

A step of its own, after the release is committed (:mod:`app.jobs.publication`): the audit
judges a release, it is not part of it, so neither its failure nor its time may roll back or
hold the release. It runs before the job is marked succeeded (which drops the raw snapshot,
its ground truth, read again here from ``job_inputs``), and its report is stored in a
transaction of its own. A failed audit is logged and leaves no report (404
``no_attack_report``); the job still succeeds.

The attack runs in a thread: it is numpy and scipy over a release already in memory, at most
a fraction of the publication's time (docs/attacks.md). A worker stopping meanwhile cancels
it; the thread stops at its next progress report (one attack run at most) and its partial
result is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy.ext.asyncio import AsyncSession

from app.core.attacks.release_audit import audit_report, published_background, skipped_report
from app.core.attacks.settings import AuditSettings
from app.core.disassociation.model import Disassociation
from app.core.errors import ErrorCode
from app.core.model import Publication, PublishedRelease, Transaction
from app.db.engine import Database
from app.db.models import Series
from app.db.repositories.attacks import AttackRepository
from app.db.repositories.jobs import JobRepository
from app.db.repositories.release_load import load_releases
from app.db.repositories.releases import ReleaseRepository
from app.errors import AppError
from app.io.compact import CompactCorpus
from app.io.terms import PrivateMatch
from app.jobs.context import JobContext
from app.jobs.progress import ProgressTracker, flush_progress
from app.observability import logger
from app.runtime import Runtime
from app.services.history import attach_layouts
from app.services.payload import decode_corpus, publication_input

__all__ = ["ATTACK_PHASE", "AUDIT_START", "AuditCancelled", "audit_publication"]

_log = logger("serialpub.audit")

#: The job phase (``GET /v1/jobs/{id}``) while the audit runs, between ``store`` and the end.
ATTACK_PHASE = "attack"
#: Overall progress when the audit starts (the store phase starts at 5/6) and the share of
#: the rest it may report: the job reaches 1.0 only when it is marked succeeded.
AUDIT_START, _SPAN = 5 / 6, 0.99 / 6


async def audit_publication(
    runtime: Runtime,
    context: JobContext,
    publication: Publication,
    release_id: int,
    tracker: ProgressTracker,
) -> bool:
    """Attack release ``release_id``, committed by the job of ``context``, and keep the report
    (its own transaction); ``False`` when the audit failed (logged; no report is kept). Runs
    off the event loop; reports progress as phase ``attack``. Only a cancellation raises."""
    tracker(ATTACK_PHASE, AUDIT_START)
    # The job's flusher stopped before the store phase; the audit is long enough to need one.
    flusher = asyncio.create_task(flush_progress(runtime.db, context.job_id, tracker))
    try:
        report = await _audit(runtime.db, context, publication, release_id, tracker)
        seconds = float(report.get("seconds") or 0.0)
        async with runtime.db.session() as session:
            await AttackRepository(session).add_report(release_id, report, seconds)
    except asyncio.CancelledError:
        raise
    except Exception:
        # The release is committed and stands: a broken audit costs its report, nothing more.
        _log.exception("semantic audit failed; the release stands without a report")
        return False
    finally:
        flusher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await flusher
    _log.info("semantic audit", status=report["status"], reason=report["reason"], seconds=seconds)
    return True


async def _audit(
    db: Database,
    context: JobContext,
    publication: Publication,
    release_id: int,
    tracker: ProgressTracker,
) -> dict[str, Any]:
    started = time.perf_counter()
    settings, series = context.audit, context.series
    async with db.session() as session:
        payload = await JobRepository(session).payload(context.job_id)
        if payload is None:
            raise AppError(
                "the job's input is gone before its audit", code=ErrorCode.JOB_INPUT_MISSING
            )
        published = await _series_releases(session, context, publication.release, release_id)
        background = await _background(session, series, settings, published)
    if background is None:
        return skipped_report("no_background_uploaded", settings, 0)

    cancelled = threading.Event()

    def progress(_: str, fraction: float) -> None:
        if cancelled.is_set():
            # The job was cancelled: a thread cannot be stopped from outside, so it stops
            # itself here rather than attack on for minutes with nobody to read the result.
            raise AuditCancelled
        tracker(ATTACK_PHASE, AUDIT_START + _SPAN * fraction)

    def run() -> dict[str, Any]:
        corpus = _transactions(decode_corpus(payload), series, context.extra_private_terms)
        return audit_report(
            corpus,
            publication.release,
            publication.ledger,
            background,
            settings,
            method=context.method.name,
            series_seed=_series_seed(context.params),
            progress=progress,
            disassociation=publication.extra(Disassociation),
            series=published,
            r_th=_r_th(context.params),
        )

    try:
        report = await asyncio.to_thread(run)
    except asyncio.CancelledError:
        cancelled.set()  # the awaited future is cancelled; its thread is told here
        raise
    # The whole audit as the job saw it: reading the snapshot and the background included.
    report["seconds"] = round(time.perf_counter() - started, 4)
    return report


class AuditCancelled(Exception):
    """Raised in the audit's thread when its job was cancelled."""


def _series_seed(params: Any) -> int:
    # Disassociation draws nothing at random and takes no seed; the audit's ties then draw
    # from 0 unless the audit's own ``seed`` says otherwise.
    return int(getattr(params, "seed", None) or 0)


def _transactions(corpus: CompactCorpus, series: Series, extra: Sequence[str]) -> list[Transaction]:
    # The same terms the publication saw: private spellings folded the series' way.
    mode = cast(PrivateMatch, series.private_match)  # the series schema admits only these
    transactions, _, _ = publication_input(corpus, series.private_terms, extra, mode)
    return transactions


def _r_th(params: Any) -> float | None:
    # The Anony family's threshold; a method without one gets no detector-aware risk.
    value = getattr(params, "r_th", None)
    return float(value) if value is not None else None


async def _series_releases(
    session: AsyncSession, context: JobContext, release: PublishedRelease, release_id: int
) -> list[PublishedRelease]:
    """The series' public releases up to this one, which is last (what every analyst holds
    once it is out): the published background and the frequency detector's counts."""
    releases_of = await ReleaseRepository(session).list(context.series.id)
    earlier = [m for m in releases_of if m.id != release_id]
    releases = await load_releases(session, earlier)
    # Disassociated releases publish chunks, not rows: their layouts are the background.
    await attach_layouts(session, context.method, earlier, releases)
    return [*releases, release]


async def _background(
    session: AsyncSession,
    series: Series,
    settings: AuditSettings,
    published: Sequence[PublishedRelease],
) -> list[list[str]] | None:
    """The attacker's background: the series' public rows up to this release (what every
    analyst holds once it is out), or the uploaded corpus (``None`` when there is none)."""
    if settings.background == "uploaded":
        stored = await AttackRepository(session).background(series.id)
        if stored is None:
            return None
        payload = stored.payload
        return await asyncio.to_thread(
            lambda: [sorted(t.terms) for t in _transactions(decode_corpus(payload), series, [])]
        )
    return published_background(published)

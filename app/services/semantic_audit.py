"""The semantic audit of a series (design.md §11): its settings, its background
corpus and the report kept for auditors. The attack itself runs in the publication job, as its
own step after the release is committed (:mod:`app.jobs.audit`).
"""

from __future__ import annotations

import asyncio

from sqlalchemy.ext.asyncio import AsyncSession

from app.core.attacks.settings import AuditSettings, parse_audit_settings
from app.core.errors import ErrorCode
from app.db.models import Series
from app.db.repositories.attacks import AttackRepository
from app.db.repositories.releases import ReleaseRepository
from app.errors import NotFound
from app.schemas.attacks import AttackReportOut, BackgroundOut
from app.services.ingest import Corpus
from app.services.payload import encode_corpus
from app.services.series import AUDIT_PARAM

__all__ = ["attack_report", "audit_settings", "upload_background"]


def audit_settings(series: Series) -> AuditSettings:
    """The series' effective ``semantic_audit`` (disabled when absent)."""
    return parse_audit_settings(series.params.get(AUDIT_PARAM))


async def upload_background(session: AsyncSession, series: Series, corpus: Corpus) -> BackgroundOut:
    """Store (or replace) the series' background corpus."""
    payload = await asyncio.to_thread(encode_corpus, corpus.compact)
    stored = await AttackRepository(session).put_background(series.id, payload, len(corpus))
    return BackgroundOut(
        series=series.name,
        transactions=stored.n_transactions,
        uploaded_at=stored.uploaded_at,
        used=audit_settings(series).background == "uploaded",
    )


async def attack_report(session: AsyncSession, series: Series, release_no: int) -> AttackReportOut:
    """The kept report of release ``release_no``; 404 when there is no such release or no
    audit ran for it."""
    model = await ReleaseRepository(session).get(series.id, release_no)
    where = {"series": series.name, "release_no": release_no}
    if model is None:
        raise NotFound(f"series {series.name!r} has no release {release_no}", where)
    kept = await AttackRepository(session).report(model.id)
    if kept is None:
        raise NotFound(
            f"no semantic audit ran for release {release_no} of {series.name!r}",
            where,
            code=ErrorCode.NO_ATTACK_REPORT,
        )
    return AttackReportOut(
        series=series.name, release_no=release_no, created_at=kept.created_at, **kept.report
    )

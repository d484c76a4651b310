"""A series at a glance (the web view's series page): each release's public figures for
every reader; its risk as of now, its escalation and suppression for auditors and admins;
the jobs a reader may follow.

Public figures come from the release's public header (:mod:`app.services.public_files`), the
risk from the stored summaries ``GET …/releases/{no}/risk`` serves, jobs as ``GET
/v1/jobs/{id}`` shows them: the page shows what the API answers the same key.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.core.attacks.settings import parse_audit_settings
from app.core.guarantees import guarantee_of
from app.db.engine import Database
from app.db.models import Job, Release, Series
from app.db.repositories.overview import segment_copies, series_jobs
from app.db.repositories.releases import ReleaseRepository
from app.db.repositories.series import SeriesRepository
from app.errors import Forbidden, NotFound
from app.schemas.jobs import JobOut
from app.schemas.overview import (
    EscalationOut,
    JobLine,
    ReleaseAudit,
    ReleaseFigures,
    ReleaseRisk,
    SeriesPage,
)
from app.schemas.releases import Withdrawal
from app.schemas.risk import GuaranteeOut, RiskSummary, RowRiskOut, RowRiskPage
from app.services.auth import Principal
from app.services.history import load_public_releases
from app.services.public_files import release_header
from app.services.publishing import get_job, job_out
from app.services.releases import get_release_model, withdrawn
from app.services.renderings import risk_summary_bytes
from app.services.risk import assess, cover, default_r_th
from app.services.series import AUDIT_PARAM

__all__ = [
    "JOBS_SHOWN",
    "audited",
    "escalation_of",
    "guarantee_out",
    "jobs_for",
    "one_release",
    "readable_job",
    "release_risk",
    "release_audits",
    "release_figures",
    "riskiest_rows",
    "series_page",
    "withdrawal_of",
]

#: The most recent jobs the series page lists.
JOBS_SHOWN = 20


def guarantee_out(method: str, params: dict[str, Any]) -> GuaranteeOut:
    """What a release of ``method`` published with ``params`` promises (docs/methods.md)."""
    found = guarantee_of(method, params)
    return GuaranteeOut(name=found.name, promise=found.promise, assumes=found.assumes)


def _figures(model: Release, header: dict[str, Any], segments: dict[str, int]) -> ReleaseFigures:
    layout = "n_rows" not in header  # a chunk layout (disassociation) counts records instead
    copies = None
    if not layout:
        copies = dict(segments)
        for term, n in dict(header.get("global_bag") or {}).items():
            copies[term] = copies.get(term, 0) + int(n)
    return ReleaseFigures(
        release_no=model.release_no,
        label=header.get("label"),
        method=str(header.get("method", model.method)),
        created_at=model.created_at,
        n_rows=None if layout else int(header["n_rows"]),
        n_clusters=model.n_clusters,
        counterfeit_rows=header.get("counterfeit_rows"),
        private_copies=None if copies is None else dict(sorted(copies.items())),
        guarantee=guarantee_out(model.method, dict(header.get("params") or model.params)),
        suppression_beyond_budget=bool(header.get("suppression_beyond_budget", False)),
        params=dict(header.get("params") or {}),
        withdrawn=withdrawn(model),
    )


def _as_listed(figures: ReleaseFigures) -> ReleaseFigures:
    """A withdrawn release as ``GET …/releases`` lists it to a reader it answers 410: its
    number, label, rows, clusters, time and withdrawal, none of its body's figures."""
    return figures.model_copy(update={"private_copies": None, "counterfeit_rows": None})


async def release_figures(
    session: AsyncSession, db: Database, series: Series
) -> tuple[list[Release], list[ReleaseFigures]]:
    """Every release's public figures, oldest first (with the release rows they came from)."""
    models = list(await ReleaseRepository(session).list(series.id))
    segments = await segment_copies(session, [m.id for m in models])
    figures = [
        _figures(m, await release_header(db, series, m.release_no), segments[m.id]) for m in models
    ]
    return models, figures


def escalation_of(report: dict[str, Any] | None) -> EscalationOut | None:
    """The job report's ``escalation`` in a few words; ``None`` when it did not escalate."""
    found = (report or {}).get("escalation")
    if not isinstance(found, dict):
        return None
    steps = [s for s in found.get("steps", []) if isinstance(s, dict)]
    published = [str(s.get("step")) for s in steps if s.get("published")]
    return EscalationOut(
        step=published[-1] if published else None,
        steps=[str(s.get("step")) for s in steps],
        clusters_before=found.get("clusters_before"),
        clusters_after=found.get("clusters_after"),
    )


async def one_release(
    session: AsyncSession, db: Database, series: Series, release_no: int
) -> ReleaseFigures:
    """One release's public figures (404 when the series has no such release)."""
    model = await get_release_model(session, series, release_no)
    segments = await segment_copies(session, [model.id])
    return _figures(model, await release_header(db, series, release_no), segments[model.id])


async def release_audits(
    session: AsyncSession, db: Database, series: Series, models: list[Release]
) -> list[ReleaseAudit]:
    """Auditors and admins: each release's risk summary as ``GET …/risk`` answers them
    (the series' r_th), its escalation (its job's report) and the copies it suppressed."""
    job_ids = [m.job_id for m in models if m.job_id is not None]
    jobs = {j.id: j for j in (await session.scalars(select(Job).where(Job.id.in_(job_ids)))).all()}
    audits = []
    for model in models:
        risk = RiskSummary.model_validate_json(
            await risk_summary_bytes(session, db, series, model.release_no, None, True)
        )
        job = jobs.get(model.job_id) if model.job_id is not None else None
        audits.append(
            ReleaseAudit(
                release_no=model.release_no,
                risk=risk,
                escalation=escalation_of(job.report if job is not None else None),
                suppressed={k: v for k, v in (risk.suppressed or {}).items() if v},
            )
        )
    return audits


async def jobs_for(session: AsyncSession, series: Series, principal: Principal) -> list[JobLine]:
    """The jobs of the series ``principal`` may read (``GET /v1/jobs/{id}``): every one for
    auditors and admins, the ones its key posted for a publisher; newest first."""
    mine = None if principal.sees_private else principal.key_id
    return [
        JobLine(
            job=job_out(j, series.name, principal), label=j.label, n_transactions=j.n_transactions
        )
        for j in await series_jobs(session, series.id, mine, JOBS_SHOWN)
    ]


async def series_page(
    session: AsyncSession, db: Database, series: Series, principal: Principal
) -> SeriesPage:
    """What the series page shows ``principal`` (roles as in docs/api.md)."""
    models, figures = await release_figures(session, db, series)
    if not principal.sees_private:
        figures = [_as_listed(f) if f.withdrawn else f for f in figures]
    audits = await release_audits(session, db, series, models) if principal.sees_private else None
    jobs = None
    if principal.sees_private or principal.role == "publisher":
        jobs = await jobs_for(session, series, principal)
    return SeriesPage(releases=figures, audits=audits, jobs=jobs)


async def riskiest_rows(
    session: AsyncSession, series: Series, release_no: int, offset: int, limit: int
) -> RowRiskPage:
    """A page of the release's rows by serial risk, riskiest first (ties in the order of
    ``GET …/risk/rows``), at the series' r_th: the same figures, sorted for an auditor."""
    models, releases = await load_public_releases(session, series)
    index = next((i for i, m in enumerate(models) if m.release_no == release_no), None)
    if index is None:
        raise NotFound(
            f"series {series.name!r} has no release {release_no}",
            {"series": series.name, "release_no": release_no},
        )
    found = await assess(series.id, releases, index, default_r_th(series))
    rows = sorted(found.rows, key=lambda r: -r.serial_risk)[offset : offset + limit]
    return RowRiskPage(
        release_no=release_no,
        offset=offset,
        limit=limit,
        total=len(found.rows),
        rows=[
            RowRiskOut(
                cluster_id=r.cluster_id, row=list(r.row), serial_risk=r.serial_risk, term=r.term
            )
            for r in rows
        ],
    )


async def release_risk(
    session: AsyncSession,
    db: Database,
    series: Series,
    release_no: int,
    rows_from: int,
    rows_shown: int,
    cover_shown: int,
) -> ReleaseRisk:
    """What an auditor reads of one release: its risk summary (``GET …/risk``), a page of
    its rows riskiest first, and its largest overlaps (``GET …/cover``)."""
    risk = RiskSummary.model_validate_json(
        await risk_summary_bytes(session, db, series, release_no, None, True)
    )
    entries = await cover(session, series, release_no)
    return ReleaseRisk(
        risk=risk,
        rows=await riskiest_rows(session, series, release_no, rows_from, rows_shown),
        cover=sorted(entries, key=lambda e: -e.size)[:cover_shown],
        cover_total=len(entries),
    )


async def readable_job(
    session: AsyncSession, principal: Principal, job_id: uuid.UUID
) -> tuple[JobOut, str | None]:
    """The job as ``GET /v1/jobs/{id}`` shows it to ``principal`` (403 as it answers: the
    key that posted it, auditors and admins, within the key's series), and its label."""
    job = await get_job(session, job_id)
    if not principal.sees_private and job.api_key_id != principal.key_id:
        raise Forbidden(
            "only the key that posted a job, auditors and admins read it", {"id": str(job_id)}
        )
    series = await session.get(Series, job.series_id)
    name = series.name if series else ""
    if not principal.sees_series(name):
        raise Forbidden(
            f"this key is scoped to series {principal.series!r}",
            {"id": str(job_id), "key_series": principal.series},
        )
    return job_out(job, name, principal), job.label


async def withdrawal_of(
    session: AsyncSession, series_name: str, release_no: int
) -> Withdrawal | None:
    """When and why the series' release was withdrawn (``None``: it was not, or is gone)."""
    series = await SeriesRepository(session).get_by_name(series_name)
    if series is None:
        return None
    model = await ReleaseRepository(session).get(series.id, release_no)
    return withdrawn(model) if model is not None else None


async def audited(session: AsyncSession, job: JobOut) -> bool:
    """Whether a finished publication's release went through the semantic audit. Its
    timings say so to auditors and admins (an ``attack`` phase, and a report that does not
    mark the audit failed); to others, that the series asks for one (an interrupted or
    failed audit is told only to the former). A dry run is never audited."""
    if job.dry_run or job.status != "succeeded":
        return False
    if job.phase_seconds is not None:
        failed = (job.report or {}).get("semantic_audit") == "failed"
        return "attack" in job.phase_seconds and not failed
    series = await SeriesRepository(session).get_by_name(job.series)
    return series is not None and parse_audit_settings(series.params.get(AUDIT_PARAM)).enabled

"""The web view's pages: series, releases, counts with intervals, jobs.

Roles as in the API (docs/api.md "Roles and keys"): every reader sees series and releases;
risk, covers, per-row risk, escalation, suppression and every job only auditors and admins;
a publisher the jobs its key posted. What a role may not read is never rendered: the
templates get only what the services return for that role.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request, Response
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse, StreamingResponse

from app.errors import NotFound
from app.schemas.jobs import JobOut
from app.schemas.overview import ReleaseFigures, SeriesPage
from app.services import counts, overview, public_files, verdict, withdrawal
from app.services.access_trail import AccessAction
from app.services.releases import list_releases
from app.services.renderings import release_document, stream_document
from app.services.series import get_series, list_series, series_out
from app.web.charts import Bin, RiskColumn, bars, intervals, risk_columns
from app.web.deps import ReaderDep, RuntimeDep, SessionDep
from app.web.render import HERE, WebRoute, page
from app.web.trail import read

__all__ = ["CLUSTERS_PER_PAGE", "PHASES", "ROWS_PER_PAGE", "root", "router"]

router = APIRouter(prefix="/web", route_class=WebRoute, include_in_schema=False)
#: The service's own address: a person who opens it in a browser wants the web view.
root = APIRouter(route_class=WebRoute, include_in_schema=False)

CLUSTERS_PER_PAGE = 50
ROWS_PER_PAGE = 100
#: Cover entries a release page lists (the largest overlaps first).
COVER_SHOWN = 200
#: Seconds a series page waits for the verdict before showing it as still running.
VERDICT_WAIT_S = 3.0
#: The publication job's phases in order (docs/api-releases.md "GET /v1/jobs/{job_id}").
PHASES = ("prepare", "anony", "bp", "fp1", "fp2", "verify", "risk", "store", "attack")
#: The semantic audit's phase, after the store: a job ends in ``store`` either way.
ATTACK_CHIP = "attack"

Page = Annotated[int, Query(ge=1, le=2**31 - 1)]
Offset = Annotated[int, Query(ge=0, le=2**31 - 1)]


@root.get("/")
@router.get("")
@router.get("/")
async def home() -> Response:
    """``/``, ``/web`` and ``/web/`` (docs/web.md's address): the series list, or the
    sign-in form that leads there."""
    return RedirectResponse("/web/series", status_code=303)


@router.get("/series")
async def series_list(request: Request, reader: ReaderDep, session: SessionDep) -> Response:
    principal = reader.principal
    shown = [
        series_out(s, n) for s, n in await list_series(session) if principal.sees_series(s.name)
    ]
    guarantees = {s.name: overview.guarantee_out(s.method, s.params) for s in shown}
    return page(request, "series_list.html", {"series": shown, "guarantees": guarantees})


def _release_link(name: str, release_no: int) -> str:
    return f"/web/series/{name}/releases/{release_no}"


def _category(release_no: int, withdrawn: bool) -> str:
    """A release's label on a chart's axis: its number, and whether it was withdrawn."""
    return f"{release_no} withdrawn" if withdrawn else str(release_no)


def _series_charts(name: str, data: SeriesPage, reads_withdrawn: bool) -> dict[str, Any]:
    releases = data.releases
    gone = {r.release_no for r in releases if r.withdrawn}
    categories = [_category(r.release_no, r.release_no in gone) for r in releases]
    # No link where the reader would get 410.
    links = [
        "" if r.release_no in gone and not reads_withdrawn else _release_link(name, r.release_no)
        for r in releases
    ]
    found: dict[str, Any] = {
        "volume": bars(
            categories,
            [
                ("rows", [r.n_rows for r in releases], "rows"),
                ("private copies", [r.copies_total for r in releases], "copies"),
                ("counterfeit rows", [r.counterfeit_rows for r in releases], "counterfeits"),
            ],
            "count",
            links,
            title="Rows, private copies and counterfeit rows published, release by release",
        )
    }
    if data.audits:
        found["risk"] = risk_columns(
            [
                RiskColumn(
                    category=_category(a.release_no, a.release_no in gone),
                    bins=[Bin(b.lo, b.hi, b.count) for b in a.risk.histogram],
                    max_risk=a.risk.max_serial_risk,
                    r_th=a.risk.r_th,
                    rows_over=a.risk.rows_over_threshold,
                    href=_release_link(name, a.release_no),
                )
                for a in data.audits
            ],
            "Serial risk of each release's rows, as of now, against r_th",
        )
    return found


def _assumptions(releases: list[ReleaseFigures]) -> list[tuple[str, str, list[int]]]:
    """Each guarantee with an assumption, its text and the releases that rest on it."""
    found: dict[tuple[str, str], list[int]] = {}
    for r in releases:
        if r.guarantee.assumes:
            found.setdefault((r.guarantee.name, r.guarantee.assumes), []).append(r.release_no)
    return [(name, text, nos) for (name, text), nos in found.items()]


@router.get("/series/{name}")
async def series_page(
    name: str, request: Request, reader: ReaderDep, session: SessionDep, runtime: RuntimeDep
) -> Response:
    principal = reader.principal
    series = await get_series(session, name)
    data = await overview.series_page(session, runtime.db, series, principal)
    found = None
    if data.audits is not None:
        read(request, AccessAction.RISK_READ)  # every release's, as GET …/{name}/risk
    if data.audits is not None and data.releases:
        found = await verdict.verdict(
            runtime.db,
            series,
            len(data.releases),
            [a.risk for a in data.audits],
            VERDICT_WAIT_S,
        )
    shown = series_out(series, len(data.releases))
    context = {
        "series": shown,
        "guarantee": overview.guarantee_out(series.method, shown.params),
        "data": data,
        "audits": {a.release_no: a for a in data.audits or []},
        "charts": _series_charts(name, data, principal.sees_private),
        "withdrawn": {r.release_no: r.withdrawn for r in data.releases if r.withdrawn},
        "assumptions": _assumptions(data.releases),
        "verdict": found,
        "verdict_pending": data.audits is not None and bool(data.releases) and found is None,
    }
    return page(request, "series.html", context)


@router.get("/series/{name}/counts")
async def counts_page(
    name: str,
    request: Request,
    reader: ReaderDep,
    session: SessionDep,
    runtime: RuntimeDep,
    term: Annotated[str | None, Query(max_length=200)] = None,
) -> Response:
    series = await get_series(session, name)
    listed = await list_releases(session, series)
    withdrawn = {r.release_no: r.withdrawn for r in listed if r.withdrawn}
    # A withdrawn release's counts are its body's: not shown to a reader it answers 410.
    hidden = set() if reader.principal.sees_private else set(withdrawn)
    found = await counts.series_counts(runtime.db, series, len(listed)) if listed else {}
    chosen = term if term in found else next(iter(found), None)
    context: dict[str, Any] = {
        "series": series,
        "terms": list(found),
        "term": chosen,
        "withdrawn": withdrawn,
    }
    if chosen is not None:
        rows = [(p.release_no, None if p.release_no in hidden else p) for p in found[chosen]]
        points = [p for _, p in rows if p is not None]
        for point in points:
            read(request, AccessAction.RELEASE_READ, point.release_no)
        context["rows"] = rows
        if points:
            context["chart"] = intervals(
                [_category(p.release_no, p.release_no in withdrawn) for p in points],
                [(float(p.published), p.low, p.high) for p in points],
                f"copies of {chosen}",
                f"Published copies of {chosen} and the interval of the true count, release "
                "by release",
            )
    return page(request, "counts.html", context)


ReleaseNo = Annotated[int, Path(ge=1, le=2**31 - 1)]


@router.get("/series/{name}/releases/{release_no}")
async def release_page(
    name: str,
    release_no: ReleaseNo,
    request: Request,
    reader: ReaderDep,
    session: SessionDep,
    runtime: RuntimeDep,
    page_no: Annotated[int, Query(alias="page", ge=1, le=2**31 - 1)] = 1,
    rows_from: Offset = 0,
) -> Response:
    series = await get_series(session, name)
    # As the API: analysts and publishers get 410 for a withdrawn release.
    await withdrawal.ensure_served(runtime.db, reader.principal, series.id, name, release_no)
    figures = await overview.one_release(session, runtime.db, series, release_no)
    first = (page_no - 1) * CLUSTERS_PER_PAGE
    header, clusters = await public_files.release_clusters(
        runtime.db, series, release_no, first, CLUSTERS_PER_PAGE
    )
    context: dict[str, Any] = {
        "series": series,
        "base": _release_link(name, release_no),
        "release": figures,
        "header": header,
        "clusters": clusters,
        "page": page_no,
        "pages": max(1, -(-figures.n_clusters // CLUSTERS_PER_PAGE)),
        "rows_from": rows_from,
        "rows_per_page": ROWS_PER_PAGE,
    }
    if reader.principal.sees_private and figures.n_rows is not None:
        audit = await overview.release_risk(
            session, runtime.db, series, release_no, rows_from, ROWS_PER_PAGE, COVER_SHOWN
        )
        read(request, AccessAction.RISK_READ, release_no)
        read(request, AccessAction.COVER_READ, release_no)
        histogram = audit.risk.histogram
        context["audit"] = audit
        context["risk_chart"] = bars(
            [f"{b.lo:g}-{b.hi:g}" for b in histogram],
            [("rows", [b.count for b in histogram], "rows")],
            "rows",
            title="Rows by serial risk",
        )
    return page(request, "release.html", context)


_DOWNLOADS = {"release.json": "json", "release.ndjson": "ndjson"}


@router.get("/series/{name}/releases/{release_no}/{file}")
async def download(
    name: str,
    release_no: ReleaseNo,
    file: str,
    reader: ReaderDep,
    session: SessionDep,
    runtime: RuntimeDep,
) -> Response:
    """The public release as ``GET /v1/series/{name}/releases/{no}`` serves it, or the
    analyst's export (``serialpub export --format supports``), as a file."""
    series = await get_series(session, name)
    await withdrawal.ensure_served(runtime.db, reader.principal, series.id, name, release_no)
    filename = f"{name}-{release_no}-{file}"
    disposition = {"Content-Disposition": f'attachment; filename="{filename}"'}
    if file == "supports.csv":
        text = await counts.supports_csv(runtime.db, series, release_no)
        return Response(text, media_type="text/csv; charset=utf-8", headers=disposition)
    if file not in _DOWNLOADS:
        raise NotFound("no such file", {"file": file})
    document = await release_document(runtime.db, series.id, name, release_no, _DOWNLOADS[file])
    meta = document.meta
    if document.identity is not None:
        return Response(document.identity, media_type=meta.media_type, headers=disposition)
    return StreamingResponse(
        stream_document(runtime.db, meta, False, 0, meta.identity_size - 1),
        media_type=meta.media_type,
        headers={**disposition, "Content-Length": str(meta.identity_size)},
    )


@router.get("/jobs/{job_id}")
async def job_page(
    job_id: uuid.UUID, request: Request, reader: ReaderDep, session: SessionDep
) -> Response:
    shown, label = await overview.readable_job(session, reader.principal, job_id)
    escalation = overview.escalation_of(shown.report) if shown.report else None
    withdrawn = None
    if shown.release_no is not None:
        withdrawn = await overview.withdrawal_of(session, shown.series, shown.release_no)
    audited = await overview.audited(session, shown)
    context = {
        "job": shown,
        "label": label,
        "chips": _chips(shown, audited),
        "escalation": escalation,
        "withdrawn": withdrawn,
    }
    return page(request, "job.html", context)


def _chips(job: JobOut, audited: bool) -> list[tuple[str, str]]:
    """Each phase and its chip's state: ``done``, ``current``, ``skipped`` (the finished job
    never ran it: no audit, or a dry run's store) or ``""`` (not reached yet)."""
    current = PHASES.index(job.phase) if job.phase in PHASES else -1
    chips = []
    for i, phase in enumerate(PHASES):
        if job.status == "succeeded":
            ran = audited if phase == ATTACK_CHIP else current < 0 or i <= current
            state = "done" if ran else "skipped"
        else:
            state = "done" if i < current else "current" if i == current else ""
        chips.append((phase, state))
    return chips


@router.get("/jobs/{job_id}/progress")
async def job_progress(job_id: uuid.UUID, reader: ReaderDep, session: SessionDep) -> Response:
    """The job's status as ``GET /v1/jobs/{id}`` shows it to the reader: the job page's
    script asks it every second while the job runs."""
    shown, _ = await overview.readable_job(session, reader.principal, job_id)
    return JSONResponse(shown.model_dump(mode="json"))


_STATIC = {
    "web.css": "text/css; charset=utf-8",
    "progress.js": "text/javascript; charset=utf-8",
    "favicon.svg": "image/svg+xml",
}


@router.get("/static/{file}")
async def static(file: str) -> Response:
    """The web view's stylesheet, script and icon: served by the service, from the
    package, never from another origin."""
    if file not in _STATIC:
        raise NotFound("no such file", {"file": file})
    return FileResponse(
        HERE / "static" / file,
        media_type=_STATIC[file],
        headers={"Cache-Control": "public, max-age=3600"},
    )


@router.get("/{rest:path}")
async def not_found(rest: str) -> Response:
    raise NotFound("no such page", {"path": f"/web/{rest}"})

"""Risk, covers and the statistics file (auditors)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response

from app.api.deps import AuditorDep, ReleaseNo, RuntimeDep, SessionDep
from app.api.representation import DOCUMENT_RESPONSES, REVALIDATE, document_response
from app.schemas.errors import error_responses
from app.schemas.risk import CoverEntryOut, RiskSummary, RowRiskPage, StatisticsOut
from app.services import renderings, risk
from app.services.series import get_series

router = APIRouter(
    prefix="/v1/series/{name}", tags=["risk"], responses=error_responses(401, 403, 404)
)

RThQuery = Annotated[float | None, Query(ge=1, description="Default: the series' r_th")]


_RISK_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "model": RiskSummary,
        "description": "Stored bytes per number of releases of the series: `ETag`, "
        "`Cache-Control: no-cache` (it changes when releases are published)",
    },
    **DOCUMENT_RESPONSES,
}


@router.get(
    "/releases/{release_no}/risk",
    responses=_RISK_RESPONSES,
    summary="Serial risk of a release's rows, counting every release published since",
)
async def release_risk(
    name: str,
    release_no: ReleaseNo,
    request: Request,
    principal: AuditorDep,
    session: SessionDep,
    runtime: RuntimeDep,
    r_th: RThQuery = None,
) -> Response:
    # AuditorDep checked the role and the series before any byte is sent, 304s included.
    series = await get_series(session, name)
    document = await renderings.risk_document(
        session, runtime.db, series, release_no, r_th, principal.sees_private
    )
    return document_response(request, runtime.db, document, REVALIDATE)


@router.head(
    "/releases/{release_no}/risk",
    responses=_RISK_RESPONSES,
    summary="The risk summary's headers (size, ETag)",
)
async def head_release_risk(
    name: str,
    release_no: ReleaseNo,
    request: Request,
    principal: AuditorDep,
    session: SessionDep,
    runtime: RuntimeDep,
    r_th: RThQuery = None,
) -> Response:
    return await release_risk(name, release_no, request, principal, session, runtime, r_th)


@router.get(
    "/releases/{release_no}/risk/rows",
    response_model=RowRiskPage,
    summary="Serial risk per published row",
)
async def release_risk_rows(
    name: str,
    release_no: ReleaseNo,
    principal: AuditorDep,
    session: SessionDep,
    offset: Annotated[int, Query(ge=0)] = 0,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 100,
    r_th: RThQuery = None,
) -> RowRiskPage:
    series = await get_series(session, name)
    return await risk.risk_rows(session, series, release_no, r_th, offset, limit)


@router.get(
    "/risk",
    response_model=list[RiskSummary],
    summary="Serial risk of every release of the series, as now",
)
async def series_risk(
    name: str, principal: AuditorDep, session: SessionDep, r_th: RThQuery = None
) -> list[RiskSummary]:
    series = await get_series(session, name)
    return await risk.series_risk(session, series, r_th, principal.sees_private)


@router.get(
    "/releases/{release_no}/cover",
    response_model=list[CoverEntryOut],
    summary="Overlaps of the release's clusters with every other release",
)
async def release_cover(
    name: str, release_no: ReleaseNo, principal: AuditorDep, session: SessionDep
) -> list[CoverEntryOut]:
    series = await get_series(session, name)
    return await risk.cover(session, series, release_no)


@router.get(
    "/statistics",
    response_model=StatisticsOut,
    summary="Wong's statistics file m(o, s) and p(o, s, k) for one individual",
)
async def statistics(
    name: str,
    individual: Annotated[str, Query(min_length=1, max_length=500)],
    principal: AuditorDep,
    runtime: RuntimeDep,
    session: SessionDep,
) -> StatisticsOut:
    series = await get_series(session, name)
    return await risk.statistics(session, series, runtime.secret, individual)

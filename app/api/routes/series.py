"""Series: admins create them, every role reads them."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from app.api.body import json_body, request_body
from app.api.deps import AdminDep, PrincipalDep, RuntimeDep, SessionDep
from app.db.repositories.series import SeriesRepository
from app.schemas.errors import error_responses
from app.schemas.series import SeriesCreate, SeriesOut
from app.services import series as service

router = APIRouter(prefix="/v1/series", tags=["series"], responses=error_responses(401, 403))


@router.post(
    "",
    status_code=201,
    response_model=SeriesOut,
    summary="Create a series",
    openapi_extra=request_body(SeriesCreate),
    responses=error_responses(400, 409, 413, 415, 422),
)
async def create_series(
    request: Request, principal: AdminDep, session: SessionDep, runtime: RuntimeDep
) -> SeriesOut:
    body = await json_body(request, SeriesCreate)
    series = await service.create_series(
        session, body, allow_seed=runtime.settings.publisher_seed_allowed
    )
    return service.series_out(series, 0)


@router.get("", response_model=list[SeriesOut], summary="All series")
async def list_series(principal: PrincipalDep, session: SessionDep) -> list[SeriesOut]:
    return [
        service.series_out(s, n)
        for s, n in await service.list_series(session)
        if principal.sees_series(s.name)
    ]


@router.get(
    "/{name}", response_model=SeriesOut, summary="One series", responses=error_responses(404)
)
async def get_series(name: str, principal: PrincipalDep, session: SessionDep) -> SeriesOut:
    principal.require_series(name)
    series = await service.get_series(session, name)
    return service.series_out(series, await SeriesRepository(session).release_count(series.id))


@router.delete(
    "/{name}",
    status_code=204,
    summary="Delete a series that has no release (admin)",
    description="Only a series that never published: one with a release answers 409 "
    "`series_has_releases` (withdraw a mistaken release instead), one with a queued or "
    "running job `series_has_jobs`. Its finished jobs go with it; keys scoped to its name "
    "stay. Logged with the admin's key id.",
    responses=error_responses(404, 409),
)
async def delete_series(name: str, principal: PrincipalDep, session: SessionDep) -> Response:
    principal.require("admin")
    await service.delete_series(session, principal, name)
    return Response(status_code=204)

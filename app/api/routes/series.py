"""Series: admins create them, every role reads them."""

from __future__ import annotations

from fastapi import APIRouter

from app.api.deps import PrincipalDep, SessionDep
from app.db.repositories.series import SeriesRepository
from app.schemas.errors import error_responses
from app.schemas.series import SeriesCreate, SeriesOut
from app.services import series as service

router = APIRouter(prefix="/v1/series", tags=["series"], responses=error_responses(401, 403))


@router.post("", status_code=201, response_model=SeriesOut, summary="Create a series",
             responses=error_responses(409, 422))
async def create_series(body: SeriesCreate, principal: PrincipalDep,
                        session: SessionDep) -> SeriesOut:
    principal.require("admin")
    series = await service.create_series(session, body)
    return service.series_out(series, 0)


@router.get("", response_model=list[SeriesOut], summary="All series")
async def list_series(principal: PrincipalDep, session: SessionDep) -> list[SeriesOut]:
    return [service.series_out(s, n) for s, n in await service.list_series(session)]


@router.get("/{name}", response_model=SeriesOut, summary="One series",
            responses=error_responses(404))
async def get_series(name: str, principal: PrincipalDep, session: SessionDep) -> SeriesOut:
    series = await service.get_series(session, name)
    return service.series_out(series, await SeriesRepository(session).release_count(series.id))

"""Operations: liveness, readiness, Prometheus metrics."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Response
from sqlalchemy import text

from app.api.deps import RuntimeDep
from app.core.errors import ErrorCode
from app.errors import AppError
from app.observability import METRICS_CONTENT_TYPE, metrics_exposition
from app.schemas.errors import ErrorBody

router = APIRouter(tags=["operations"])

_METRICS_EXAMPLE = (
    "# HELP serialpub_jobs_total Publication jobs by outcome\n"
    "# TYPE serialpub_jobs_total counter\n"
    'serialpub_jobs_total{status="succeeded"} 3.0\n'
)


class NotReady(AppError):
    status_code = 503
    code = ErrorCode.NOT_READY


@router.get(
    "/healthz",
    summary="The process is up (no key)",
    responses={200: {"content": {"application/json": {"example": {"status": "ok"}}}}},
)
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get(
    "/readyz",
    summary="The database is reachable (no key)",
    responses={
        200: {"content": {"application/json": {"example": {"status": "ready"}}}},
        503: {"description": "Database unreachable", "model": ErrorBody},
    },
)
async def readyz(runtime: RuntimeDep) -> dict[str, str]:
    try:
        async with runtime.db.connect() as conn:
            await conn.execute(text("SELECT 1"))
    except Exception as exc:  # any failure to reach the database means "not ready"
        raise NotReady("database unreachable", {"reason": type(exc).__name__}) from None
    return {"status": "ready"}


@router.get(
    "/metrics",
    summary="Prometheus metrics (no key)",
    description="Every process of this `serve` summed (its uvicorn workers and their "
    "in-process job workers), whichever answers; a `serialpub worker` serves its own on "
    "`SERIALPUB_WORKER_METRICS_PORT`.",
    response_class=Response,
    responses={200: {"content": {"text/plain": {"example": _METRICS_EXAMPLE}}}},
)
async def metrics() -> Response:
    # The files of every process are read and summed: off the event loop.
    body = await asyncio.to_thread(metrics_exposition)
    return Response(body, media_type=METRICS_CONTENT_TYPE)

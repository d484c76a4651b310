"""Operations: liveness, readiness, Prometheus metrics."""

from __future__ import annotations

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy import text

from app.api.deps import RuntimeDep
from app.core.errors import ErrorCode
from app.errors import AppError
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
    response_class=Response,
    responses={200: {"content": {"text/plain": {"example": _METRICS_EXAMPLE}}}},
)
async def metrics() -> Response:
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

"""Operations: liveness, readiness, Prometheus metrics."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Response

from app.api.deps import RuntimeDep
from app.core.errors import ErrorCode
from app.db.engine import StorageState, database_size
from app.errors import AppError
from app.observability import (
    DATABASE_FULL,
    DATABASE_SIZE,
    METRICS_CONTENT_TYPE,
    metrics_exposition,
)
from app.runtime import Runtime
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
    retry_after = 5


#: Seconds the database queries of ``/metrics`` may take before the scrape goes on without
#: them.
_SIZE_TIMEOUT_S = 2.0


@router.get(
    "/healthz",
    summary="The process is up (no key)",
    responses={200: {"content": {"application/json": {"example": {"status": "ok"}}}}},
)
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get(
    "/readyz",
    summary="The database is reachable and has room (no key)",
    responses={
        200: {"content": {"application/json": {"example": {"status": "ready"}}}},
        503: {
            "description": "Database unreachable (`not_ready`), or out of space (`storage_full`)",
            "model": ErrorBody,
        },
    },
)
async def readyz(runtime: RuntimeDep) -> dict[str, str]:
    try:
        async with runtime.db.connect() as conn:
            # Reaching the database, and what any process of the service met there.
            full = await StorageState.full(conn)
    except Exception as exc:  # any failure to reach the database means "not ready"
        raise NotReady("database unreachable", {"reason": type(exc).__name__}) from None
    if full is not None:
        # The service cannot take publications until space is added.
        raise NotReady(
            f"the database had no space left for a write ({full}); add space",
            {"reason": "disk_full", "what": full},
            code=ErrorCode.STORAGE_FULL,
        )
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
async def metrics(runtime: RuntimeDep) -> Response:
    await _observe_database(runtime)
    # The files of every process are read and summed: off the event loop.
    body = await asyncio.to_thread(metrics_exposition)
    return Response(body, media_type=METRICS_CONTENT_TYPE)


async def _observe_database(runtime: Runtime) -> None:
    """``serialpub_database_size_bytes`` and ``serialpub_database_full`` as of this scrape;
    left as they were when the database does not answer at once (a scrape must not wait for
    it)."""
    try:
        async with asyncio.timeout(_SIZE_TIMEOUT_S), runtime.db.connect() as conn:
            DATABASE_SIZE.set(await database_size(conn))
            DATABASE_FULL.set(await StorageState.full(conn) is not None)
    except Exception:  # the metrics age; /readyz says why
        return

"""Jobs: the publisher that posted one, auditors and admins."""

from __future__ import annotations

import uuid

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from app.api.deps import PrincipalDep, RuntimeDep, SessionDep, StandalonePrincipalDep
from app.db.models import Series
from app.errors import Forbidden
from app.schemas.errors import error_responses
from app.schemas.jobs import JobOut
from app.services.publishing import FINISHED, cancel_job, get_job, job_out, wait_for_job

#: Seconds ``DELETE`` waits for a running job's worker to stop it before answering 202.
CANCEL_WAIT_S = 10.0

router = APIRouter(prefix="/v1/jobs", tags=["jobs"], responses=error_responses(401, 403, 404))


@router.get("/{job_id}", response_model=JobOut, summary="A publication job")
async def read_job(job_id: uuid.UUID, principal: PrincipalDep, session: SessionDep) -> JobOut:
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
    return job_out(job, name, principal)


@router.delete(
    "/{job_id}",
    response_model=JobOut,
    summary="Cancel a queued or running job",
    description="The job fails with error `job_cancelled` and stores nothing, as for any "
    "failed publication. 200 once it has stopped; 202 while the worker running it "
    "is still stopping it. Finished jobs answer 409. The publisher that posted "
    "it, or an admin.",
    responses={
        202: {"model": JobOut, "description": "Cancellation requested, still running"},
        **error_responses(409),
    },
)
async def delete_job(
    job_id: uuid.UUID, principal: StandalonePrincipalDep, runtime: RuntimeDep
) -> JSONResponse:
    async with runtime.db.session() as session:
        job = await get_job(session, job_id)
        if principal.role != "admin" and job.api_key_id != principal.key_id:
            raise Forbidden(
                "only the key that posted a job, and admins, cancel it", {"id": str(job_id)}
            )
        job = await cancel_job(session, job_id)
        series = await session.get(Series, job.series_id)
        name = series.name if series else ""
    # Committed: the worker can now see the request (and lock the row to fail the job).
    if job.status not in FINISHED:
        job = await wait_for_job(runtime.db, job_id, CANCEL_WAIT_S)
    body = job_out(job, name, principal).model_dump(mode="json")
    return JSONResponse(body, status_code=200 if job.status in FINISHED else 202)

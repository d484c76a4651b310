"""Jobs: the publisher that posted one, auditors and admins."""

from __future__ import annotations

import uuid

from fastapi import APIRouter

from app.api.deps import PrincipalDep, SessionDep
from app.db.models import Series
from app.errors import Forbidden
from app.schemas.errors import error_responses
from app.schemas.jobs import JobOut
from app.services.publishing import get_job, job_out

router = APIRouter(prefix="/v1/jobs", tags=["jobs"], responses=error_responses(401, 403, 404))


@router.get("/{job_id}", response_model=JobOut, summary="A publication job")
async def read_job(job_id: uuid.UUID, principal: PrincipalDep, session: SessionDep) -> JobOut:
    job = await get_job(session, job_id)
    if not principal.sees_private and job.api_key_id != principal.key_id:
        raise Forbidden("only the key that posted a job, auditors and admins read it",
                        {"id": str(job_id)})
    series = await session.get(Series, job.series_id)
    name = series.name if series else ""
    if not principal.sees_series(name):
        raise Forbidden(f"this key is scoped to series {principal.series!r}",
                        {"id": str(job_id), "key_series": principal.series})
    return job_out(job, name, principal)

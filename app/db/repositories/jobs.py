"""Publication jobs, their transient input and idempotency keys."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.base import utcnow
from app.db.models import IdempotencyKey, Job, JobInput

__all__ = ["JobRepository"]


class JobRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def get(self, job_id: uuid.UUID, *, for_update: bool = False) -> Job | None:
        statement = select(Job).where(Job.id == job_id)
        if for_update:
            # FOR NO KEY UPDATE: the running job's transaction holds FOR KEY SHARE on its row
            # from the moment it stores the release (releases.job_id references it), and FOR
            # UPDATE would wait behind it: a DELETE during the semantic audit hung until the
            # audit ended. Nothing ever changes a job's key.
            statement = statement.with_for_update(key_share=True)
        found: Job | None = await self.session.scalar(statement)
        return found

    async def add(self, job: Job, payload: bytes) -> Job:
        self.session.add(job)
        await self.session.flush()
        self.session.add(JobInput(job_id=job.id, payload=payload))
        await self.session.flush()
        return job

    async def payload(self, job_id: uuid.UUID) -> bytes | None:
        payload: bytes | None = await self.session.scalar(
            select(JobInput.payload).where(JobInput.job_id == job_id)
        )
        return payload

    async def drop_payload(self, job_id: uuid.UUID) -> None:
        await self.session.execute(delete(JobInput).where(JobInput.job_id == job_id))

    async def set_progress(self, job_id: uuid.UUID, phase: str, progress: float) -> None:
        await self.session.execute(
            update(Job)
            .where(Job.id == job_id, Job.status == "running")
            .values(phase=phase, progress=progress)
        )

    async def finish(self, job: Job, status: str, **values: Any) -> None:
        job.status = status
        job.finished_at = utcnow()
        for name, value in values.items():
            setattr(job, name, value)
        await self.session.flush()
        await self.drop_payload(job.id)

    async def idempotency(self, api_key_id: uuid.UUID, key: str) -> IdempotencyKey | None:
        return await self.session.get(IdempotencyKey, (api_key_id, key))

    async def add_idempotency(
        self, api_key_id: uuid.UUID, key: str, series_id: int, body_hash: str, job_id: uuid.UUID
    ) -> None:
        self.session.add(
            IdempotencyKey(
                api_key_id=api_key_id,
                key=key,
                series_id=series_id,
                body_hash=body_hash,
                job_id=job_id,
            )
        )
        await self.session.flush()

    async def by_status(self, statuses: tuple[str, ...]) -> list[Job]:
        return list((await self.session.scalars(select(Job).where(Job.status.in_(statuses)))).all())

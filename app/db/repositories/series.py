"""Series queries."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Job, Release, Series

__all__ = ["SeriesRepository"]


class SeriesRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def get_by_name(self, name: str) -> Series | None:
        found: Series | None = await self.session.scalar(select(Series).where(Series.name == name))
        return found

    async def list(self) -> Sequence[Series]:
        return (await self.session.scalars(select(Series).order_by(Series.name))).all()

    async def add(self, series: Series) -> Series:
        self.session.add(series)
        await self.session.flush()
        return series

    async def release_count(self, series_id: int) -> int:
        count = await self.session.scalar(
            select(func.count()).select_from(Release).where(Release.series_id == series_id)
        )
        return int(count or 0)

    async def release_counts(self) -> dict[int, int]:
        rows = await self.session.execute(
            select(Release.series_id, func.count()).group_by(Release.series_id)
        )
        return {int(series_id): int(n) for series_id, n in rows.all()}

    async def jobs_in_flight(self, series_id: int) -> Sequence[uuid.UUID]:
        """The series' jobs that are queued or running (publications and dry runs)."""
        found = await self.session.scalars(
            select(Job.id)
            .where(Job.series_id == series_id, Job.status.in_(("queued", "running")))
            .order_by(Job.created_at)
        )
        return found.all()

    async def delete(self, series_id: int) -> None:
        """Delete the series; its jobs, idempotency keys, statistics, signatures and
        background corpus go with it (``ON DELETE CASCADE``)."""
        await self.session.execute(delete(Series).where(Series.id == series_id))

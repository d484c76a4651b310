"""Wong's private state: the statistics file m(o, s), appended to by every release."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.core.model import Publication
from app.core.variants.wong import statistics_update
from app.db.repositories.statistics import append_statistics, load_statistics
from app.methods.storage import MethodStorage

__all__ = ["STORAGE"]


class WongStorage(MethodStorage):
    async def load_state(self, session: AsyncSession, series_id: int) -> dict[str, Any]:
        return {"statistics": await load_statistics(session, series_id)}

    async def store_state(
        self, session: AsyncSession, series_id: int, publication: Publication
    ) -> None:
        update = statistics_update(publication)
        if update:
            await append_statistics(session, series_id, publication.release.release_no, update)


STORAGE = WongStorage()

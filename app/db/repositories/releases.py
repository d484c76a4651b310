"""Release rows (metadata only; bulk content is in :mod:`release_store`/`release_load`)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import ClusterLedger, Release, ReleaseLedger

__all__ = ["ReleaseRepository"]


class ReleaseRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def list(self, series_id: int) -> Sequence[Release]:
        statement = (
            select(Release).where(Release.series_id == series_id).order_by(Release.release_no)
        )
        return (await self.session.scalars(statement)).all()

    async def get(
        self, series_id: int, release_no: int, *, for_update: bool = False
    ) -> Release | None:
        statement = select(Release).where(
            Release.series_id == series_id, Release.release_no == release_no
        )
        if for_update:
            # FOR NO KEY UPDATE: a withdrawal changes no key, and must not wait behind the
            # key-share locks of rows that reference the release.
            statement = statement.with_for_update(key_share=True)
        found: Release | None = await self.session.scalar(statement)
        return found

    async def count(self, series_id: int) -> int:
        """Releases of the series (numbered 1..n without gaps, so also the latest number)."""
        total = await self.session.scalar(
            select(func.count()).select_from(Release).where(Release.series_id == series_id)
        )
        return int(total or 0)

    async def counterfeit_rows(self, release_id: int) -> int:
        """All counterfeit rows of a release (BP, FP1 and FP2: private)."""
        total = await self.session.scalar(
            select(
                func.coalesce(func.sum(ClusterLedger.bp + ClusterLedger.fp1 + ClusterLedger.fp2), 0)
            ).where(ClusterLedger.release_id == release_id)
        )
        return int(total or 0)

    async def suppressed(self, release_id: int) -> dict[str, int]:
        """Copies suppressed per private term (private: auditors and admins only)."""
        found = await self.session.scalar(
            select(ReleaseLedger.suppressed).where(ReleaseLedger.release_id == release_id)
        )
        return dict(found or {})

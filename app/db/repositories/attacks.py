"""Background corpora and attack reports of the semantic audit (design.md §11)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.base import utcnow
from app.db.models import AttackReport, AuditBackground

__all__ = ["AttackRepository"]


class AttackRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def background(self, series_id: int) -> AuditBackground | None:
        return await self.session.get(AuditBackground, series_id)

    async def put_background(
        self, series_id: int, payload: bytes, n_transactions: int
    ) -> AuditBackground:
        """Store or replace the series' background corpus (one statement: two uploads at
        once leave one of them whole, never a mix)."""
        values = {"payload": payload, "n_transactions": n_transactions, "uploaded_at": utcnow()}
        statement = (
            insert(AuditBackground)
            .values(series_id=series_id, **values)
            .on_conflict_do_update(index_elements=["series_id"], set_=values)
            .returning(AuditBackground)
        )
        stored = (
            await self.session.scalars(statement, execution_options={"populate_existing": True})
        ).one()
        return stored

    async def add_report(self, release_id: int, report: dict[str, Any], seconds: float) -> None:
        self.session.add(AttackReport(release_id=release_id, report=report, seconds=seconds))
        await self.session.flush()

    async def report(self, release_id: int) -> AttackReport | None:
        found: AttackReport | None = await self.session.scalar(
            select(AttackReport).where(AttackReport.release_id == release_id)
        )
        return found

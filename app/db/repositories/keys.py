"""API keys, looked up by the sha256 of the presented key."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import ApiKey

__all__ = ["KeyRepository"]


class KeyRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def by_hash(self, key_hash: str, *, include_revoked: bool = False) -> ApiKey | None:
        statement = select(ApiKey).where(ApiKey.key_hash == key_hash)
        if not include_revoked:
            statement = statement.where(ApiKey.revoked_at.is_(None))
        found: ApiKey | None = await self.session.scalar(statement)
        return found

    async def get(self, key_id: uuid.UUID, *, for_update: bool = False) -> ApiKey | None:
        """The key (``for_update``: locked, so that two rotations of it take turns)."""
        if not for_update:
            return await self.session.get(ApiKey, key_id)
        found: ApiKey | None = await self.session.scalar(
            select(ApiKey).where(ApiKey.id == key_id).with_for_update(key_share=True)
        )
        return found

    async def active(self) -> Sequence[ApiKey]:
        statement = (
            select(ApiKey).where(ApiKey.revoked_at.is_(None)).order_by(ApiKey.created_at, ApiKey.id)
        )
        return (await self.session.scalars(statement)).all()

    async def add(self, key: ApiKey) -> ApiKey:
        self.session.add(key)
        await self.session.flush()
        return key

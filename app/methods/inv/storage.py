"""Inv's private state: each individual's signature (m-invariance), replaced as it grows."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.core.model import Publication
from app.core.variants.inv import signatures_update
from app.db.repositories.signatures import load_signatures, store_signatures
from app.methods.storage import MethodStorage

__all__ = ["STORAGE"]


class InvStorage(MethodStorage):
    async def load_state(self, session: AsyncSession, series_id: int) -> dict[str, Any]:
        return {"signatures": await load_signatures(session, series_id)}

    async def store_state(
        self, session: AsyncSession, series_id: int, publication: Publication
    ) -> None:
        update = signatures_update(publication)
        if update:
            await store_signatures(session, series_id, update)


STORAGE = InvStorage()

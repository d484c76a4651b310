"""The web view's sign-ins, each read together with its key."""

from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import ApiKey, WebSignIn

__all__ = ["SignInRepository"]


class SignInRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def add(self, sign_in: WebSignIn) -> WebSignIn:
        self.session.add(sign_in)
        await self.session.flush()
        return sign_in

    async def with_key(self, sign_in_id: uuid.UUID) -> tuple[WebSignIn, ApiKey] | None:
        """The sign-in and its key, in one statement (every page asks)."""
        statement = (
            select(WebSignIn, ApiKey)
            .join(ApiKey, ApiKey.id == WebSignIn.key_id)
            .where(WebSignIn.id == sign_in_id)
        )
        found = (await self.session.execute(statement)).one_or_none()
        return None if found is None else (found[0], found[1])

    async def remove(self, sign_in_id: uuid.UUID) -> None:
        await self.session.execute(delete(WebSignIn).where(WebSignIn.id == sign_in_id))

    async def remove_expired(self, now: dt.datetime) -> None:
        await self.session.execute(delete(WebSignIn).where(WebSignIn.expires_at <= now))

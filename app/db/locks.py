"""PostgreSQL advisory locks, transaction-scoped, in namespaces so that they never collide."""

from __future__ import annotations

import enum

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

__all__ = ["LockSpace", "xact_lock", "MIGRATION_LOCK"]

#: ``pg_advisory_lock(MIGRATION_LOCK)`` (one 64-bit key, session scope) is held around
#: ``alembic upgrade``: replicas that start together migrate one after the other, and the
#: later ones find the schema at head. Any fixed value works; this one spells "serialpb".
MIGRATION_LOCK = 0x73657269616C7062


class LockSpace(enum.IntEnum):
    #: Held while a job row is created, so that job order equals commit order per series.
    POST = 1
    #: Held by the job that publishes the next release of a series, from load to store.
    PUBLISH = 2
    #: Held while an Idempotency-Key is looked up and claimed.
    IDEMPOTENCY = 3


async def xact_lock(session: AsyncSession, space: LockSpace, key: int | str) -> None:
    """Take ``pg_advisory_xact_lock(space, key)``; released at commit or rollback."""
    if isinstance(key, str):
        await session.execute(
            text("SELECT pg_advisory_xact_lock(:space, hashtext(:key))"),
            {"space": int(space), "key": key},
        )
    else:
        await session.execute(
            text("SELECT pg_advisory_xact_lock(:space, :key)"), {"space": int(space), "key": key}
        )

"""Access to the psycopg connection under a SQLAlchemy session (for COPY and procrastinate)."""

from __future__ import annotations

from typing import Any

import psycopg
from sqlalchemy.ext.asyncio import AsyncSession

__all__ = ["driver_connection"]


async def driver_connection(
    session: AsyncSession,
) -> psycopg.AsyncConnection[tuple[Any, ...]]:
    """The psycopg ``AsyncConnection`` of the session's current transaction."""
    connection = await session.connection()
    raw = await connection.get_raw_connection()
    driver = raw.driver_connection
    assert isinstance(driver, psycopg.AsyncConnection)
    return driver

"""Engine and session factory (async SQLAlchemy over psycopg 3)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy.ext.asyncio import (
    AsyncConnection,
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from app.db.embedded import sqlalchemy_url
from app.settings import Settings

__all__ = ["Database", "resolve_database_url"]


def resolve_database_url(settings: Settings) -> str:
    """``DATABASE_URL``, or the URL of the embedded server (started on first use)."""
    if settings.database_url:
        return sqlalchemy_url(settings.database_url)
    from app.db.embedded import start_embedded

    return start_embedded(settings.data_dir)


class Database:
    """An engine with its session factory; one per process (created in the app lifespan)."""

    def __init__(self, url: str, *, pool_size: int = 10) -> None:
        self.url = url
        self.engine: AsyncEngine = create_async_engine(
            url, pool_size=pool_size, max_overflow=pool_size, pool_pre_ping=True
        )
        self.sessionmaker = async_sessionmaker(self.engine, expire_on_commit=False)

    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        """A session in a transaction: committed on success, rolled back on error."""
        async with self.sessionmaker() as session, session.begin():
            yield session

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[AsyncConnection]:
        async with self.engine.connect() as conn:
            yield conn

    async def dispose(self) -> None:
        await self.engine.dispose()

"""Engine and session factory (async SQLAlchemy over psycopg 3)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import psycopg
from psycopg_pool import AsyncConnectionPool
from sqlalchemy.ext.asyncio import (
    AsyncConnection,
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from app.db.embedded import libpq_url, sqlalchemy_url
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
        # The hot read path (a stored release: one query per request) skips the ORM, the
        # pre-ping and BEGIN/COMMIT: autocommit psycopg connections of their own, opened on
        # first use (a pool opens inside the running event loop).
        self._read_pool: AsyncConnectionPool[psycopg.AsyncConnection[tuple[object, ...]]] = (
            AsyncConnectionPool(
                libpq_url(url),
                min_size=1,
                max_size=pool_size,
                open=False,
                kwargs={"autocommit": True},
            )
        )
        self._read_pool_opened = False
        self._read_pool_lock = asyncio.Lock()

    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        """A session in a transaction: committed on success, rolled back on error."""
        async with self.sessionmaker() as session, session.begin():
            yield session

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[AsyncConnection]:
        async with self.engine.connect() as conn:
            yield conn

    @asynccontextmanager
    async def read_connection(self) -> AsyncIterator[psycopg.AsyncConnection[tuple[object, ...]]]:
        """An autocommit connection for single-statement reads (no transaction around)."""
        if not self._read_pool_opened:
            async with self._read_pool_lock:
                if not self._read_pool_opened:
                    await self._read_pool.open()
                    self._read_pool_opened = True
        async with self._read_pool.connection() as conn:
            yield conn

    async def dispose(self) -> None:
        if self._read_pool_opened:
            self._read_pool_opened = False
            await self._read_pool.close()
        await self.engine.dispose()

"""PostgreSQL advisory locks, in namespaces so that they never collide.

Two kinds. Transaction-scoped (:func:`xact_lock`), released at commit or rollback, for what
one short transaction serialises (creating a job, claiming an Idempotency-Key). And
session-scoped on a connection of its own, outside any transaction (:class:`SessionLock`), for
what must stay serialised across minutes of computation without holding a transaction open
(a publication: docs/deploy.md, "PostgreSQL settings").
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
from types import TracebackType

import psycopg
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.embedded import libpq_url

__all__ = ["LockSpace", "MIGRATION_LOCK", "SessionLock", "xact_lock"]

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


#: Seconds between two tries for a lock another session holds: the first waits are short (a
#: store ending), later ones up to the last value (a computation of minutes).
_POLL_S = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0)

#: What the lock's connection sets for itself. It sits idle, outside a transaction, for as
#: long as a computation lasts: ``idle_session_timeout`` (PostgreSQL 14) would end it and
#: free the lock, so it is off for this session only. TCP keepalives at the server's end
#: free the lock within about a minute when the worker's host disappears without closing
#: the connection (a power cut, a partition); a killed process closes it at once.
_SESSION_SETUP = (
    ("idle_session_timeout", "0"),
    ("tcp_keepalives_idle", "30"),
    ("tcp_keepalives_interval", "10"),
    ("tcp_keepalives_count", "3"),
)


class SessionLock:
    """``pg_advisory_lock(space, key)`` held by a connection of its own in autocommit mode:
    no transaction is open while it is held, so neither
    ``idle_in_transaction_session_timeout`` nor vacuum is affected, however long the holder
    computes.

    Taken with ``pg_try_advisory_lock`` in a loop rather than a blocking
    ``pg_advisory_lock``: a wait of minutes behind another holder would otherwise be one
    statement, cut by ``statement_timeout``, and could not be cancelled from here. Released
    on every exit (``pg_advisory_unlock``, then the connection closes); if the holder dies,
    PostgreSQL frees the lock when its connection ends.

    The lock is lost if its connection is (a restart, a cut path). :meth:`ensure` says
    whether it still holds, and takes it again when not; what it serialised must then be
    checked again by its holder (a publication compares the series' releases in its store).
    """

    def __init__(self, url: str, space: LockSpace, key: int) -> None:
        self._url = libpq_url(url)
        self._space, self._key = int(space), key
        self._conn: psycopg.AsyncConnection[tuple[object, ...]] | None = None

    async def __aenter__(self) -> SessionLock:
        await self.acquire()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.release()

    async def acquire(self) -> None:
        """Wait until the lock is this object's (cancellable at any point)."""
        attempt = 0
        while True:
            if self._conn is None or self._conn.closed:
                self._conn = await self._connect()
            cur = await self._conn.execute(
                "SELECT pg_try_advisory_lock(%s::int4, %s::int4)", (self._space, self._key)
            )
            row = await cur.fetchone()
            if row is not None and row[0]:
                return
            await asyncio.sleep(_POLL_S[min(attempt, len(_POLL_S) - 1)])
            attempt += 1

    async def _connect(self) -> psycopg.AsyncConnection[tuple[object, ...]]:
        conn = await psycopg.AsyncConnection.connect(self._url, autocommit=True)
        try:
            for name, value in _SESSION_SETUP:
                # Only the settings this server knows (idle_session_timeout is 14+).
                await conn.execute(
                    "SELECT set_config(name, %s, false) FROM pg_settings WHERE name = %s",
                    (value, name),
                )
        except BaseException:
            await conn.close()
            raise
        return conn

    async def held(self) -> bool:
        """Whether this object still holds the lock (``False`` once its connection is gone)."""
        if self._conn is None or self._conn.closed:
            return False
        try:
            cur = await self._conn.execute(
                "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted "
                "AND pid = pg_backend_pid() AND classid::int8 = %s AND objid::int8 = %s",
                (self._space, self._key & 0xFFFFFFFF),
            )
            return await cur.fetchone() is not None
        except psycopg.OperationalError:
            return False

    async def ensure(self) -> bool:
        """Hold the lock, taking it again if it was lost; ``False`` when it had been lost
        (whatever it serialised may have moved meanwhile)."""
        if await self.held():
            return True
        await self._close()
        await self.acquire()
        return False

    async def release(self) -> None:
        """Let go of the lock (never raises: a lost connection has let go already)."""
        conn = self._conn
        if conn is not None and not conn.closed:
            with contextlib.suppress(psycopg.Error):
                await conn.execute(
                    "SELECT pg_advisory_unlock(%s::int4, %s::int4)", (self._space, self._key)
                )
        await self._close()

    async def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(psycopg.Error, OSError):
                await conn.close()

"""Engine and session factory (async SQLAlchemy over psycopg 3), and what a database fault is.

A restart, a failover or a cut network path ends the service's connections. Every way to a
connection checks it on checkout (SQLAlchemy's ``pool_pre_ping``, psycopg_pool's ``check``),
so a connection that died while it sat in a pool never reaches a request; one that dies
during a request is a *transient* fault (:func:`is_transient`): the API answers 503 with
``Retry-After`` (nothing was half-written: the request's transaction is rolled back), reads
on the hot path are tried once more (:meth:`Database.read`), and jobs retry the step
(:mod:`app.jobs.outages`). A full disk is not transient (:func:`is_storage_full`): it lasts
until an operator adds space.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import psycopg
import sqlalchemy.exc
from psycopg_pool import AsyncConnectionPool, PoolTimeout
from sqlalchemy import text
from sqlalchemy.ext.asyncio import (
    AsyncConnection,
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from app.db.embedded import libpq_url, sqlalchemy_url
from app.observability import STORAGE_FULL, logger
from app.settings import Settings

__all__ = [
    "Database",
    "NEEDED_SECONDS",
    "STORAGE_ALERT_S",
    "StorageState",
    "database_size",
    "is_storage_full",
    "is_transient",
    "resolve_database_url",
    "settings_warnings",
]

_T = TypeVar("_T")
_log = logger("serialpub.db")

#: SQLSTATEs of faults that a later try can get past: the server ended the session
#: (57P01 ``admin_shutdown``, 57P02 ``crash_shutdown``, 57P03 ``cannot_connect_now``: a
#: restart, a failover), a standby promoted elsewhere refuses writes (25006
#: ``read_only_sql_transaction``), concurrency (40001 ``serialization_failure``, 40P01
#: ``deadlock_detected``), 53300 ``too_many_connections``, 25P03
#: ``idle_in_transaction_session_timeout`` and every connection exception (class 08).
_TRANSIENT_STATES = frozenset(
    {"57P01", "57P02", "57P03", "25006", "40001", "40P01", "53300", "25P03"}
)
#: 53100 ``disk_full``: PostgreSQL could not extend a file.
_DISK_FULL = "53100"
#: Seconds a read waits for a connection of the read pool before it gives up (503).
_READ_WAIT_S = 10.0


def _causes(exc: BaseException) -> list[BaseException]:
    """``exc`` and what it wraps: SQLAlchemy's ``orig``, ``__cause__`` (procrastinate's
    ``ConnectorException``), ``__context__``; at most a few levels."""
    found: list[BaseException] = []
    pending: list[BaseException | None] = [exc]
    while pending and len(found) < 8:
        current = pending.pop(0)
        if current is None or any(current is seen for seen in found):
            continue
        found.append(current)
        pending += [getattr(current, "orig", None), current.__cause__, current.__context__]
    return found


def _sqlstate(exc: BaseException) -> str | None:
    return getattr(exc, "sqlstate", None) if isinstance(exc, psycopg.Error) else None


def is_storage_full(exc: BaseException) -> bool:
    """PostgreSQL could not write for lack of space (``disk_full``)."""
    return any(_sqlstate(cause) == _DISK_FULL for cause in _causes(exc))


def is_transient(exc: BaseException) -> bool:
    """A database fault that a later try can get past: a lost or refused connection, the
    server shutting down or starting up, a failover's read-only server, a serialization
    failure or deadlock, no connection free in a pool. Not a full disk, not a statement
    the server cancelled (``statement_timeout``: it would be cancelled again)."""
    for cause in _causes(exc):
        if isinstance(cause, PoolTimeout):
            return True
        if isinstance(cause, sqlalchemy.exc.DBAPIError) and cause.connection_invalidated:
            return True
        if not isinstance(cause, psycopg.Error):
            continue
        state = cause.sqlstate
        if state == _DISK_FULL:
            return False
        if state in _TRANSIENT_STATES or (state is not None and state.startswith("08")):
            return True
        # libpq's own reports ("the connection is lost", "server closed the connection
        # unexpectedly", "connection failed: ... the database system is starting up") have
        # no SQLSTATE.
        if state is None and isinstance(cause, psycopg.OperationalError):
            return True
    return False


def resolve_database_url(settings: Settings) -> str:
    """``DATABASE_URL``, or the URL of the embedded server (started on first use)."""
    if settings.database_url:
        return sqlalchemy_url(settings.database_url)
    from app.db.embedded import start_embedded

    return start_embedded(settings.data_dir)


#: Seconds ``/readyz`` answers 503 ``storage_full`` after a write failed for lack of space,
#: unless a release is stored meanwhile: long enough for a probe to see it, and bounded, so
#: that a service nobody posts to once space is added is ready again.
STORAGE_ALERT_S = 300.0

# The state's one row (:class:`app.db.models.StorageState`), on the database's clock: every
# process reads the same times.
_RECORD_FULL = text(
    "INSERT INTO storage_state (id, full_at, what) VALUES (1, now(), :what) "
    "ON CONFLICT (id) DO UPDATE SET full_at = excluded.full_at, what = excluded.what"
)
# No row is written (nor locked) while the disk is not full: a store that finds nothing to
# clear costs one index lookup.
_CLEAR_FULL = text("UPDATE storage_state SET full_at = NULL WHERE id = 1 AND full_at IS NOT NULL")
_FULL = text(
    "SELECT what FROM storage_state WHERE id = 1 "
    "AND full_at > now() - make_interval(secs => :within)"
)


class StorageState:
    """Whether PostgreSQL last refused a write for lack of space, as every process of the
    service sees it (``/readyz``, ``serialpub_database_full``).

    Kept in the database, not in the process that met it: the API and a ``serialpub worker``
    are separate processes, and a full disk the worker's store met must make the API's
    ``/readyz`` say so, as a release the worker stores must clear what the API's own write
    met. The row sits on a nearly empty page, so recording a full disk needs no new one."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def failed(self, where: str) -> None:
        """A write of ``where`` (``publication store``, ``request``) failed for lack of
        space: counted in this process, recorded for every process."""
        STORAGE_FULL.labels(where).inc()
        try:
            async with self._engine.begin() as conn:
                await conn.execute(_RECORD_FULL, {"what": where})
        except Exception as exc:  # the write that failed is reported; this is its echo
            _log.error(
                "could not record the full disk for /readyz", what=where, error=type(exc).__name__
            )

    @staticmethod
    async def stored(session: AsyncSession) -> None:
        """A release is being stored in ``session``'s transaction: once it commits, the disk
        is no longer reported full."""
        await session.execute(_CLEAR_FULL)

    @staticmethod
    async def full(conn: AsyncConnection, within: float = STORAGE_ALERT_S) -> str | None:
        """What failed for lack of space in the last ``within`` seconds, with no release
        stored since; ``None`` when nothing did."""
        what: str | None = await conn.scalar(_FULL, {"within": within})
        return what


class Database:
    """An engine with its session factory; one per process (created in the app lifespan)."""

    def __init__(self, url: str, *, pool_size: int = 10) -> None:
        self.url = url
        self.engine: AsyncEngine = create_async_engine(
            url, pool_size=pool_size, max_overflow=pool_size, pool_pre_ping=True
        )
        self.sessionmaker = async_sessionmaker(self.engine, expire_on_commit=False)
        # The hot read path (a stored release: one query per request) skips the ORM and
        # BEGIN/COMMIT: autocommit psycopg connections of their own, opened on first use (a
        # pool opens inside the running event loop). ``check`` on checkout: after a restart
        # every pooled connection is dead, and the first reader of each got a 500.
        self._read_pool: AsyncConnectionPool[psycopg.AsyncConnection[tuple[object, ...]]] = (
            AsyncConnectionPool(
                libpq_url(url),
                min_size=1,
                max_size=pool_size,
                open=False,
                kwargs={"autocommit": True},
                check=AsyncConnectionPool.check_connection,
                # A reader waits this long for a connection (the default is 30 s): with the
                # database away, it gets its 503 at once rather than after half a minute.
                timeout=_READ_WAIT_S,
            )
        )
        self._read_pool_opened = False
        self._read_pool_lock = asyncio.Lock()
        self.storage = StorageState(self.engine)

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

    async def read(
        self, fn: Callable[[psycopg.AsyncConnection[tuple[object, ...]]], Awaitable[_T]]
    ) -> _T:
        """``fn`` on a :meth:`read_connection`, tried once more on another connection when
        the first was lost under it (a read changes nothing, so a second try is safe).

        The pool checks a connection when it hands it out; this covers one that dies between
        that check and the statement (a restart at that instant, a cut path)."""
        try:
            async with self.read_connection() as conn:
                return await fn(conn)
        except psycopg.OperationalError as exc:
            if not is_transient(exc):
                raise
        async with self.read_connection() as conn:
            return await fn(conn)

    async def dispose(self) -> None:
        if self._read_pool_opened:
            self._read_pool_opened = False
            await self._read_pool.close()
        await self.engine.dispose()


#: What the service needs of PostgreSQL's timeouts, in seconds (docs/deploy.md): a setting
#: of 0 (no timeout) or at least this. ``idle_in_transaction_session_timeout``: the longest
#: wait between two statements of one transaction, the store of a release (its JSON and
#: NDJSON are rendered there: 27 s wall at 1,000,000 rows on a loaded two-core machine,
#: docs/performance.md). ``statement_timeout``: the longest statement, the COPY of a
#: release's rows (15 s at 1,000,000 rows, same table), with room for a slower disk.
NEEDED_SECONDS: dict[str, float] = {
    "idle_in_transaction_session_timeout": 60.0,
    "statement_timeout": 300.0,
}


async def settings_warnings(conn: AsyncConnection) -> list[str]:
    """One sentence per PostgreSQL setting, as this connection's sessions get them, that is
    lower than :data:`NEEDED_SECONDS` (empty when all is well)."""
    warnings = []
    for name, needed in NEEDED_SECONDS.items():
        # Milliseconds, whatever unit the setting was given in.
        value = await conn.scalar(
            text("SELECT setting::float FROM pg_settings WHERE name = :name"), {"name": name}
        )
        if value is None:
            continue
        seconds = float(value) / 1000
        if 0 < seconds < needed:
            warnings.append(
                f"PostgreSQL's {name} is {seconds:g} s, lower than the {needed:g} s the service "
                f"needs (0, no timeout, also works): a release's store may be cut off "
                f"(docs/deploy.md)"
            )
    return warnings


async def database_size(conn: AsyncConnection) -> int:
    """Bytes the current database takes on disk (``pg_database_size``)."""
    size: Any = await conn.scalar(text("SELECT pg_database_size(current_database())"))
    return int(size)

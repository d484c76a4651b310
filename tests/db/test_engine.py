"""What a database fault is (transient or a full disk), a read tried again on another
connection, and the start-up check of PostgreSQL's timeouts."""

from __future__ import annotations

import procrastinate.exceptions
import psycopg
import psycopg.errors
import pytest
import sqlalchemy.exc
import structlog.testing
from psycopg_pool import PoolTimeout
from sqlalchemy import text

from app.db.engine import Database, is_storage_full, is_transient, settings_warnings

pytestmark = [pytest.mark.anyio]


def _wrapped(error: BaseException) -> BaseException:
    """``error`` as SQLAlchemy raises it."""
    return sqlalchemy.exc.OperationalError("SELECT 1", {}, error)


@pytest.mark.parametrize(
    "error",
    [
        psycopg.errors.AdminShutdown("terminating connection due to administrator command"),
        psycopg.errors.CannotConnectNow("the database system is starting up"),
        psycopg.errors.ReadOnlySqlTransaction("cannot execute INSERT in a read-only transaction"),
        psycopg.errors.SerializationFailure("could not serialize access"),
        psycopg.errors.DeadlockDetected("deadlock detected"),
        psycopg.errors.IdleInTransactionSessionTimeout("terminating connection due to idle"),
        psycopg.OperationalError("server closed the connection unexpectedly"),
        PoolTimeout("couldn't get a connection after 10.00 sec"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_faults_a_later_try_gets_past_are_transient(error: Exception) -> None:
    assert is_transient(error) and is_transient(_wrapped(error))
    try:
        raise procrastinate.exceptions.ConnectorException from error
    except procrastinate.exceptions.ConnectorException as exc:
        assert is_transient(exc)
    assert not is_storage_full(error)


@pytest.mark.parametrize(
    "error",
    [
        psycopg.errors.QueryCanceled("canceling statement due to statement timeout"),
        psycopg.errors.UniqueViolation("duplicate key value"),
        psycopg.errors.UndefinedTable('relation "x" does not exist'),
        ValueError("not a database error"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_other_faults_are_not(error: Exception) -> None:
    assert not is_transient(error)


def test_a_full_disk_is_not_transient() -> None:
    error = psycopg.errors.DiskFull("could not extend file: No space left on device")
    assert is_storage_full(error) and is_storage_full(_wrapped(error))
    assert not is_transient(error) and not is_transient(_wrapped(error))


@pytest.mark.db
async def test_a_read_whose_connection_dies_is_tried_once_more(database_url: str) -> None:
    db = Database(database_url, pool_size=2)
    tries: list[int] = []

    async def read(conn: psycopg.AsyncConnection[tuple[object, ...]]) -> int:
        tries.append(conn.info.backend_pid)
        if len(tries) == 1:
            # The server ends this session between the pool's check and the statement.
            async with await psycopg.AsyncConnection.connect(
                conn.info.dsn, autocommit=True
            ) as other:
                await other.execute("SELECT pg_terminate_backend(%s)", (tries[0],))
        cur = await conn.execute("SELECT 42")
        row = await cur.fetchone()
        assert row is not None
        return int(row[0])  # type: ignore[call-overload]

    try:
        assert await db.read(read) == 42
    finally:
        await db.dispose()
    assert len(tries) == 2 and tries[0] != tries[1]


@pytest.mark.db
async def test_timeouts_lower_than_the_service_needs_are_named(database_url: str) -> None:
    db = Database(database_url, pool_size=1)
    try:
        async with db.connect() as conn:
            assert await settings_warnings(conn) == []
            await conn.execute(text("SET statement_timeout = '30s'"))
            await conn.execute(text("SET idle_in_transaction_session_timeout = '2s'"))
            found = await settings_warnings(conn)
            await conn.execute(text("SET statement_timeout = 0"))
            await conn.execute(text("SET idle_in_transaction_session_timeout = '10min'"))
            assert await settings_warnings(conn) == []
    finally:
        await db.dispose()
    assert len(found) == 2
    assert "idle_in_transaction_session_timeout is 2 s" in found[0]
    assert "statement_timeout is 30 s" in found[1]


@pytest.mark.db
async def test_the_worker_warns_at_start_of_a_timeout_set_too_low(database_url: str) -> None:
    """What an operator of a managed PostgreSQL sees in the worker's log at start."""
    from app.db.embedded import database_name, libpq_url
    from app.jobs.worker import check_server_settings
    from app.runtime import Runtime
    from app.settings import Settings

    name = database_name(database_url)
    with psycopg.connect(libpq_url(database_url), autocommit=True) as conn:
        conn.execute(f"ALTER DATABASE \"{name}\" SET statement_timeout = '5s'")  # type: ignore[arg-type]
    db = Database(database_url, pool_size=1)
    try:
        runtime = Runtime(settings=Settings(DATABASE_URL=database_url), db=db, secret=b"x")
        with structlog.testing.capture_logs() as logged:
            warnings = await check_server_settings(runtime)
    finally:
        await db.dispose()
        with psycopg.connect(libpq_url(database_url), autocommit=True) as conn:
            conn.execute(f'ALTER DATABASE "{name}" RESET statement_timeout')  # type: ignore[arg-type]
    assert len(warnings) == 1 and "statement_timeout is 5 s" in warnings[0]
    assert [(e["log_level"], e["event"]) for e in logged] == [("warning", warnings[0])]

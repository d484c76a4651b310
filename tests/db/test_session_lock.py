"""The series' lock of a publication: a session-level advisory lock on a connection of its
own, outside any transaction (docs/deploy.md, "PostgreSQL settings")."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time

import psycopg
import pytest

from app.db.embedded import libpq_url
from app.db.locks import LockSpace, SessionLock
from tests.support.database import ROOT

pytestmark = [pytest.mark.anyio, pytest.mark.db]

KEY = 424242


async def _state(url: str, lock: SessionLock) -> tuple[str, object]:
    """The lock connection's ``pg_stat_activity`` state and transaction start."""
    assert lock._conn is not None
    pid = lock._conn.info.backend_pid
    async with await psycopg.AsyncConnection.connect(libpq_url(url)) as conn:
        cur = await conn.execute(
            "SELECT state, xact_start FROM pg_stat_activity WHERE pid = %s", (pid,)
        )
        row = await cur.fetchone()
    assert row is not None
    return str(row[0]), row[1]


async def test_the_lock_is_held_outside_any_transaction(database_url: str) -> None:
    async with SessionLock(database_url, LockSpace.PUBLISH, KEY) as lock:
        assert await lock.held()
        state, xact_start = await _state(database_url, lock)
        assert state == "idle" and xact_start is None


async def test_a_second_holder_waits_until_the_first_lets_go(database_url: str) -> None:
    first = SessionLock(database_url, LockSpace.PUBLISH, KEY)
    second = SessionLock(database_url, LockSpace.PUBLISH, KEY)
    await first.acquire()
    waiting = asyncio.create_task(second.acquire())
    await asyncio.sleep(0.5)
    assert not waiting.done()
    await first.release()
    await asyncio.wait_for(waiting, 10)
    assert await second.held() and not await first.held()
    await second.release()


async def test_another_series_does_not_wait(database_url: str) -> None:
    async with SessionLock(database_url, LockSpace.PUBLISH, KEY):
        other = SessionLock(database_url, LockSpace.PUBLISH, KEY + 1)
        await asyncio.wait_for(other.acquire(), 5)
        await other.release()


async def test_a_lost_connection_is_seen_and_the_lock_taken_again(database_url: str) -> None:
    lock = SessionLock(database_url, LockSpace.PUBLISH, KEY)
    await lock.acquire()
    assert lock._conn is not None
    pid = lock._conn.info.backend_pid
    async with await psycopg.AsyncConnection.connect(
        libpq_url(database_url), autocommit=True
    ) as conn:
        await conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
    assert not await lock.held()
    assert await lock.ensure() is False  # it had been lost
    assert await lock.held() and await lock.ensure() is True
    await lock.release()


_HOLDER = """
import asyncio, sys, time
from app.db.locks import LockSpace, SessionLock

async def main():
    lock = SessionLock(sys.argv[1], LockSpace.PUBLISH, int(sys.argv[2]))
    await lock.acquire()
    print("held", flush=True)
    await asyncio.sleep(600)

asyncio.run(main())
"""


async def test_a_holder_killed_with_sigkill_frees_the_lock(database_url: str) -> None:
    """What a worker killed mid-job leaves: PostgreSQL ends its session, and the lock with it."""
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, database_url, str(KEY)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert await asyncio.to_thread(holder.stdout.readline) == "held\n"
        lock = SessionLock(database_url, LockSpace.PUBLISH, KEY)
        waiting = asyncio.create_task(lock.acquire())
        await asyncio.sleep(0.5)
        assert not waiting.done()
        killed = time.monotonic()
        holder.send_signal(signal.SIGKILL)
        await asyncio.wait_for(waiting, 10)
        assert time.monotonic() - killed < 5
        await lock.release()
    finally:
        holder.kill()
        holder.wait()

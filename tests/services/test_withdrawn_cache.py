"""What each process remembers of a series' withdrawn releases (app.services.withdrawal): one
query for every request in flight, a refresh before the entry expires, nothing kept from a
query that a withdrawal overtook."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from app.services import withdrawal
from app.services.auth import Principal

pytestmark = pytest.mark.anyio

ANALYST = Principal(uuid.uuid4(), "analyst", None)
AUDITOR = Principal(uuid.uuid4(), "auditor", None)


class _Database:
    """Answers the withdrawn numbers of every series from ``numbers`` as they were when the
    query started (a transaction's snapshot), each held until ``gate`` is set; counts the
    queries."""

    def __init__(self, numbers: set[int]) -> None:
        self.numbers = numbers
        self.queries = 0
        self.gate = asyncio.Event()
        self.gate.set()

    @asynccontextmanager
    async def read_connection(self) -> AsyncIterator[_Database]:
        yield self


@pytest.fixture
def db(monkeypatch: pytest.MonkeyPatch) -> Any:
    database = _Database(set())

    async def withdrawn_releases(conn: _Database, series_id: int) -> list[int]:
        conn.queries += 1
        snapshot = sorted(conn.numbers)
        await conn.gate.wait()
        return snapshot

    monkeypatch.setattr(withdrawal, "withdrawn_releases", withdrawn_releases)
    withdrawal.configure_withdrawn_cache(1.0)
    return database


async def test_requests_in_flight_share_one_query(db: Any) -> None:
    db.gate.clear()
    waiting = [
        asyncio.create_task(withdrawal.ensure_served(db, ANALYST, 1, "s", 2)) for _ in range(50)
    ]
    await asyncio.sleep(0.01)
    db.gate.set()
    await asyncio.gather(*waiting)
    assert db.queries == 1
    assert withdrawal.served_from_memory(db, ANALYST, 1, 2)


async def test_an_entry_is_read_again_before_it_expires(db: Any) -> None:
    withdrawal.configure_withdrawn_cache(0.2)
    await withdrawal.ensure_served(db, ANALYST, 1, "s", 2)
    await asyncio.sleep(0.12)  # past half its life: refreshed in the background
    db.numbers.add(2)
    assert withdrawal.served_from_memory(db, ANALYST, 1, 2)  # the old answer, still fresh
    await asyncio.sleep(0.02)
    assert db.queries == 2
    # The refresh's answer: release 2 is withdrawn, without a request having waited for it.
    assert not withdrawal.served_from_memory(db, ANALYST, 1, 2)
    assert withdrawal.served_from_memory(db, AUDITOR, 1, 2)  # auditors still read it


async def test_nothing_is_told_from_memory_before_a_query(db: Any) -> None:
    assert not withdrawal.served_from_memory(db, ANALYST, 1, 2)
    assert db.queries == 0  # and nothing waited
    withdrawal.configure_withdrawn_cache(0)
    await withdrawal.ensure_served(db, ANALYST, 1, "s", 2)
    assert not withdrawal.served_from_memory(db, ANALYST, 1, 2)  # 0: nothing kept


async def test_a_query_overtaken_by_a_withdrawal_is_not_kept(db: Any) -> None:
    db.gate.clear()
    before = asyncio.create_task(withdrawal.ensure_served(db, ANALYST, 1, "s", 2))
    await asyncio.sleep(0.01)
    withdrawal.configure_withdrawn_cache(1.0)  # what a withdrawal does to this process
    db.numbers.add(2)
    db.gate.set()
    await before
    assert not withdrawal.served_from_memory(db, ANALYST, 1, 2)  # not remembered
    assert db.queries == 1

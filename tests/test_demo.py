"""``serialpub demo`` leaves nothing behind: it stored a guessable admin key
(``demo-admin-token-<unix seconds>``) in the live database, never revoked it, and left its
series and unscoped keys there for every analyst to list. The command itself, signals and the
embedded server: tests/cli/test_demo.py."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest
from psycopg import sql

from app import demo
from app.db.embedded import libpq_url
from app.settings import Settings
from tests.support.database import fresh_database, migrate
from tests.support.demo import database_exists, demo_database

pytestmark = [pytest.mark.db]

TABLES = ("api_keys", "series", "releases", "jobs", "published_rows", "terms")


def _counts(url: str) -> dict[str, int]:
    with psycopg.connect(libpq_url(url)) as conn:
        counts = {}
        for table in TABLES:
            row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()  # type: ignore[arg-type]
            counts[table] = int(row[0]) if row else -1
    return counts


def _settings(url: str) -> Settings:
    return Settings(_env_file=None, DATABASE_URL=url)  # type: ignore[call-arg]


def test_the_demo_leaves_nothing_in_the_live_database() -> None:
    with fresh_database() as url:
        before = _counts(url)
        said: list[str] = []
        asyncio.run(demo.run_demo(_settings(url), said.append, years=2, migrate=migrate))
        assert any("release 2" in line for line in said), said
        assert _counts(url) == before
        assert not database_exists(url, demo_database(said))
        assert not any("demo-admin-token" in line for line in said)


def test_an_interrupted_demo_leaves_nothing_either(monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken(*args: Any) -> None:
        raise demo.DemoError("interrupted on purpose")

    monkeypatch.setattr(demo, "_steps", broken)
    with fresh_database() as url:
        before = _counts(url)
        said: list[str] = []
        with pytest.raises(demo.DemoError, match="on purpose"):
            asyncio.run(demo.run_demo(_settings(url), said.append, years=2, migrate=migrate))
        assert _counts(url) == before
        assert not database_exists(url, demo_database(said))


def test_a_failed_drop_names_the_database_to_drop_by_hand(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The drop is the cleanup: when it fails (server gone, rights revoked), the demo fails
    with the name of what it left, not silently or behind another error."""
    connect = psycopg.connect
    calls: list[str] = []

    def connect_then_fail(*args: Any, **kwargs: Any) -> psycopg.Connection[Any]:
        calls.append("connect")
        if len(calls) > 1:  # the first creates the database, the next would drop it
            raise psycopg.OperationalError("server closed the connection")
        return connect(*args, **kwargs)

    @contextlib.asynccontextmanager
    async def not_served(settings: Settings) -> AsyncIterator[str]:
        yield "http://127.0.0.1:9"

    async def interrupted(*args: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(demo, "_served", not_served)
    monkeypatch.setattr(demo, "_steps", interrupted)
    with fresh_database() as url:
        said: list[str] = []
        monkeypatch.setattr(demo.psycopg, "connect", connect_then_fail)
        try:
            with pytest.raises(demo.DemoError, match="could not be dropped") as raised:
                asyncio.run(demo.run_demo(_settings(url), said.append, years=1))
        finally:
            monkeypatch.setattr(demo.psycopg, "connect", connect)
        name = demo_database(said)
        assert f"drop it by hand (DROP DATABASE {name})" in str(raised.value)
        assert database_exists(url, name)
        with psycopg.connect(libpq_url(url), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))

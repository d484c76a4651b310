"""``serialpub demo`` leaves nothing behind (issue 18): it stored a guessable admin key
(``demo-admin-token-<unix seconds>``) in the live database, never revoked it, and left its
series and unscoped keys there for every analyst to list."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest

from app.db.embedded import libpq_url
from app.services import demo
from app.settings import Settings
from tests.support.database import fresh_database, migrate

pytestmark = [pytest.mark.db]

TABLES = ("api_keys", "series", "releases", "jobs", "published_rows", "terms")


def _counts(url: str) -> dict[str, int]:
    with psycopg.connect(libpq_url(url)) as conn:
        counts = {}
        for table in TABLES:
            row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()  # type: ignore[arg-type]
            counts[table] = int(row[0]) if row else -1
        databases = conn.execute(
            "SELECT count(*) FROM pg_database WHERE datname LIKE 'serialpub_demo_%'"
        ).fetchone()
        counts["demo databases"] = int(databases[0]) if databases else -1
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
        assert not any("demo-admin-token" in line for line in said)


def test_an_interrupted_demo_leaves_nothing_either(monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken(*args: Any) -> None:
        raise demo.DemoError("interrupted on purpose")

    monkeypatch.setattr(demo, "_steps", broken)
    with fresh_database() as url:
        before = _counts(url)
        with pytest.raises(demo.DemoError, match="on purpose"):
            asyncio.run(demo.run_demo(_settings(url), print, years=2, migrate=migrate))
        assert _counts(url) == before

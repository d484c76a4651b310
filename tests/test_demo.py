"""``serialpub demo`` leaves nothing behind: it stored a guessable admin key
(``demo-admin-token-<unix seconds>``) in the live database, never revoked it, and left its
series and unscoped keys there for every analyst to list. And what it prints: it printed each
key's id as "publisher key <id>", which reads as a key and is none, and with ``--serve`` no
publisher key. The command itself, signals and the embedded server: tests/cli/test_demo.py."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
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


@pytest.fixture
def created_keys(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every key the demo is given (``POST /v1/keys``'s answers: role, id, key), as it runs."""
    created: list[dict[str, Any]] = []
    send = demo._Client._send

    def spy(
        self: demo._Client, method: str, url: str, headers: dict[str, str], body: bytes | None
    ) -> tuple[int, Any, float | None]:
        sent = send(self, method, url, headers, body)
        if url == "/v1/keys" and sent[0] == 201:
            created.append(sent[1])
        return sent

    monkeypatch.setattr(demo._Client, "_send", spy)
    return created


#: A line of ``--serve`` naming a key to sign in with.
_KEY_LINE = re.compile(r"^  (auditor|analyst|publisher) key: +(\S+)  \(.+\)$")


def _nothing_of(said: list[str], keys: list[dict[str, Any]], *, but: set[str]) -> None:
    """No key's id anywhere, and no key but those of ``but``, each on its own line."""
    text = "\n".join(said)
    assert len(keys) == 3
    for key in keys:
        assert key["id"] not in text, key
        if key["key"] not in but:
            assert key["key"] not in text, key["role"]
    for key in but:
        assert [line for line in said if key in line] == [
            line for line in said if _KEY_LINE.match(line) and key in line
        ]


def test_the_demo_leaves_nothing_in_the_live_database(
    created_keys: list[dict[str, Any]],
) -> None:
    with fresh_database() as url:
        before = _counts(url)
        said: list[str] = []
        asyncio.run(demo.run_demo(_settings(url), said.append, years=2, migrate=migrate))
        assert any("release 2" in line for line in said), said
        assert _counts(url) == before
        assert not database_exists(url, demo_database(said))
        assert not any("demo-admin-token" in line for line in said)
        # Its keys died with its database: none is printed, nor anything like one.
        _nothing_of(said, created_keys, but=set())
        assert any("--serve` keeps it up, with keys to sign in" in line for line in said)


def test_the_demo_serving_prints_a_key_for_each_role_to_sign_in_with(
    created_keys: list[dict[str, Any]],
) -> None:
    """``--serve``: the auditor's, the analyst's and the publisher's key, each labelled with
    its role, and each reads the series while the demo serves; no key's id is printed."""

    async def serve_and_sign_in(url: str) -> list[str]:
        said: list[str] = []
        serving = asyncio.Event()

        def say(line: str) -> None:
            said.append(line)
            if line.startswith("serving until Ctrl-C"):
                serving.set()

        running = asyncio.create_task(
            demo.run_demo(_settings(url), say, years=1, migrate=migrate, serve=True)
        )
        waiting = asyncio.create_task(serving.wait())
        await asyncio.wait([running, waiting], return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()
        assert serving.is_set(), said
        page = next(line for line in said if "the series at a glance: " in line).split()[-1]
        base, _, name = page.partition("/web/series/")
        printed = {m[1]: m[2] for line in said if (m := _KEY_LINE.match(line))}
        async with httpx.AsyncClient(base_url=base) as client:
            for role, key in printed.items():
                answer = await client.get(
                    f"/v1/series/{name}", headers={"Authorization": f"Bearer {key}"}
                )
                assert answer.status_code == 200, (role, answer.text)
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
        return said

    with fresh_database() as url:
        said = asyncio.run(serve_and_sign_in(url))
        assert not database_exists(url, demo_database(said))
    printed = {m[1]: m[2] for line in said if (m := _KEY_LINE.match(line))}
    assert printed == {key["role"]: key["key"] for key in created_keys}
    assert set(printed) == {"auditor", "analyst", "publisher"}
    _nothing_of(said, created_keys, but=set(printed.values()))


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

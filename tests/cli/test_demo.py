"""``serialpub demo`` as people run it: it stored an admin key guessable
from the clock (``demo-admin-token-<unix seconds>``, the series being ``demo-<same seconds>``)
in the service's database and left it there with its series and unscoped keys. Now the service's
database is exactly as before, whatever happens: tested on every table's content, with the
command, with Ctrl-C and SIGTERM midway, and without ``DATABASE_URL`` (embedded server)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql
from typer.testing import CliRunner

from app import demo, observability
from app.cli import cli
from app.db.embedded import libpq_url
from app.settings import get_settings
from tests.support.database import ROOT, fresh_database
from tests.support.demo import database_exists, demo_database

pytestmark = [pytest.mark.db, pytest.mark.slow]


def _snapshot(url: str) -> dict[str, str]:
    """Every table of the database and a digest of its rows: equal means nothing changed."""
    with psycopg.connect(libpq_url(url)) as conn:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = 'public' AND table_type = 'BASE TABLE'"
            )
        ]
        digests = {}
        for table in tables:
            row = conn.execute(
                sql.SQL(
                    "SELECT count(*) || ':' || coalesce(md5(string_agg(t::text, ',' "
                    "ORDER BY t::text)), '') FROM {} AS t"
                ).format(sql.Identifier(table))
            ).fetchone()
            digests[table] = str(row[0]) if row else ""
    assert "api_keys" in digests and "series" in digests and "jobs" in digests
    return digests


def _environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "SERIALPUB_"))}
    env.update(PYTHONPATH=str(ROOT), SERIALPUB_LOG_LEVEL="WARNING", **extra)
    return env


def test_the_demo_command_leaves_the_live_database_as_it_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tokens: list[str] = []  # every bearer token the demo sent, and every key it was given
    send = demo._Client._send

    def spy(
        self: demo._Client, method: str, url: str, headers: dict[str, str], body: bytes | None
    ) -> tuple[int, Any, float | None]:
        sent = send(self, method, url, headers, body)
        answer = sent[1]
        tokens.append(headers["Authorization"].removeprefix("Bearer "))
        if isinstance(answer, dict) and isinstance(answer.get("key"), str):
            tokens.append(answer["key"])
        return sent

    monkeypatch.setattr(demo._Client, "_send", spy)
    # The test session's logging stays as it is (serve and migrate configure it once).
    monkeypatch.setattr(observability, "_configured", True)
    with fresh_database() as url:
        before = _snapshot(url)
        get_settings.cache_clear()
        start = int(time.time())
        result = CliRunner().invoke(
            cli,
            ["demo", "--years", "2"],
            env={
                "DATABASE_URL": url,
                "DATABASE_PASSWORD_FILE": None,
                "SERIALPUB_ADMIN_TOKEN": None,
                "SERIALPUB_ADMIN_TOKEN_FILE": None,
                "SERIALPUB_LOG_LEVEL": "WARNING",
            },
        )
        end = int(time.time())
        get_settings.cache_clear()
        assert result.exit_code == 0, result.output
        assert "release 2 (2022)" in result.output
        assert _snapshot(url) == before
        assert not database_exists(url, demo_database(result.output.splitlines()))
    secrets_used = set(tokens)
    assert len(secrets_used) == 4, secrets_used  # admin, publisher, analyst, auditor
    series = re.findall(r"series (demo-\S+):", result.output)
    assert len(series) == 1
    for value in [*secrets_used, *series]:
        assert not any(str(second) in value for second in range(start - 2, end + 2)), value
    for token in secrets_used:
        assert len(token) >= 43, token  # 32 random bytes or more (token_urlsafe(32))


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_demo_interrupted_midway_stops_and_removes_its_database(signum: int) -> None:
    """Ctrl-C or SIGTERM once the demo has its series, keys, a release and a job: it stops
    there (no further release), drops its database, says so and exits 128 + the signal."""
    with fresh_database() as url:
        before = _snapshot(url)
        process = subprocess.Popen(
            [sys.executable, "-m", "app", "demo", "--years", "4"],
            cwd=ROOT,
            env=_environment(DATABASE_URL=url),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            # As from a terminal. A shell starts background jobs with SIGINT ignored and
            # children inherit it (Python then installs no KeyboardInterrupt): run so, as CI
            # was, the demo never saw Ctrl-C and finished its four releases (exit 0).
            preexec_fn=_default_sigint,
        )
        assert process.stdout is not None
        lines: list[str] = []
        try:
            for line in process.stdout:
                lines.append(line)
                if line.lstrip().startswith("release 1 (2021)"):
                    process.send_signal(signum)
                    break
            rest, _ = process.communicate(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
                process.communicate()
        output = "".join(lines) + rest
        assert any(line.lstrip().startswith("release 1 (") for line in lines), output
        assert process.returncode == 128 + signum, output
        assert "the demo's throw-away database is gone" in rest, output
        assert "release 3 (" not in output
        assert _snapshot(url) == before
        assert not database_exists(url, demo_database(lines))


def test_without_database_url_the_demo_leaves_no_files(tmp_path: Path) -> None:
    """An embedded server in a temporary directory: stopped and deleted, directory included;
    no ``.serialpub`` where it ran."""
    here = tmp_path / "here"
    here.mkdir()
    # A short TMPDIR: the embedded server's Unix socket path must fit in 107 bytes, and under
    # pytest-xdist tmp_path (.../popen-gw1/test_without_database_url_the_0/) left too little.
    with tempfile.TemporaryDirectory(prefix="sp-") as short:
        temporary = Path(short)
        done = subprocess.run(
            [sys.executable, "-m", "app", "demo", "--years", "1"],
            cwd=here,
            env=_environment(TMPDIR=str(temporary)),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert list(here.iterdir()) == []
        assert list(temporary.glob("serialpub-demo-*")) == []
        assert f"embedded server in {temporary}" in done.stdout


def test_the_help_says_where_the_demo_runs() -> None:
    result = CliRunner().invoke(cli, ["demo", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "throw-away database of its own, never in the service's" in text
    assert "serialpub_demo_<random>" in text and "nothing of the demo remains" in text

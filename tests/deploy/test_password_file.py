"""Compose's way to the database: DATABASE_URL without a password, DATABASE_PASSWORD_FILE with
it. ``serve`` (one or two uvicorn workers) and ``worker`` died at start with "DATABASE_URL
holds a password and DATABASE_PASSWORD_FILE is set": the CLI exported the resolved URL, with
the password, and read the settings again, which also put the password in every child's
environment. Tested through the CLI, as the containers run it: the app and worker services
with docker-compose.yml's own command and environment (and the image's), publishing a release,
and in-process for what /proc cannot show (the environment a process changed itself)."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
import yaml
from sqlalchemy.engine import make_url

from app import cli_database as cli_module
from app.settings import get_settings
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
    """SIGTERM, then after 30 s SIGKILL to the whole process group (every process is started
    in a session of its own, :data:`_OWN_SESSION`).

    Killing the parent alone could hang the test for ever: uvicorn's worker processes inherit
    its stdout, and one that outlives it keeps the pipe open, so ``communicate`` never reads
    its end. Seen twice in one day's full runs on the shared machine: a worker still starting
    when SIGTERM came stayed in its event loop, orphaned, after the 30 s."""
    process.send_signal(signal.SIGTERM)
    try:
        out, _ = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        out, _ = process.communicate(timeout=30)
    return out


#: ``Popen`` keywords that give a service a process group of its own, for :func:`_stop`.
_OWN_SESSION: dict[str, Any] = {"start_new_session": True}


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
        **_OWN_SESSION,
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
        **_OWN_SESSION,
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


def _compose_service(name: str) -> dict[str, Any]:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return dict(compose["services"][name])


def _image_environment() -> dict[str, str]:
    """The Dockerfile's runtime ``ENV`` (production mode, JSON logs): compose runs the image."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    runtime = text.split("AS runtime", 1)[1]
    line = next(line for line in runtime.splitlines() if line.startswith("ENV "))
    return dict(pair.split("=", 1) for pair in line.split()[1:])


def _as_compose_runs(
    service: str, tmp_path: Path, database_url: str, port: int
) -> tuple[list[str], dict[str, str]]:
    """``service``'s command and environment from docker-compose.yml, its paths moved here:
    /run/secrets/NAME to a file of this test, /tmp to ``tmp_path``, the database to the test
    one (still without a password), the API on ``port`` of the loopback interface."""
    spec = _compose_service(service)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "SERIALPUB_"))}
    env.update(_image_environment())
    assert env["SERIALPUB_ENV"] == "production"
    for key, value in dict(spec["environment"]).items():
        value = str(value)
        if value.startswith("/run/secrets/"):
            value = str(tmp_path / "secrets" / value.removeprefix("/run/secrets/"))
        elif value.startswith("/tmp/"):
            value = str(tmp_path / value.removeprefix("/tmp/"))
        env[key] = value
    assert make_url(env["DATABASE_URL"]).password is None
    env["DATABASE_URL"] = (
        make_url(database_url).set(password=None).render_as_string(hide_password=False)
    )
    env["PYTHONPATH"] = str(ROOT)
    command = [str(part) for part in spec["command"]]
    assert command[0] == "serialpub"
    command = [sys.executable, "-m", "app", *command[1:]]
    for option, value in (("--host", "127.0.0.1"), ("--port", str(port))):
        if option in command:
            command[command.index(option) + 1] = value
    return command, env


def _call(
    method: str,
    url: str,
    token: str,
    body: bytes | None = None,
    content_type: str = "application/json",
) -> Any:
    request = urllib.request.Request(
        url,
        data=body,
        method=method,
        headers={"Authorization": f"Bearer {token}", "Content-Type": content_type},
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())


def test_compose_app_and_worker_publish_with_the_password_in_a_file_only(
    tmp_path: Path,
) -> None:
    """The app and worker services as compose starts them (the image's production
    environment, every secret a file, jobs in the worker): both start, a release is published
    (the worker's compute child included), and no process of either holds a secret in its
    environment."""
    port = _free_port()
    secrets_dir = tmp_path / "secrets"
    secrets_dir.mkdir()
    with fresh_database() as url:
        values = {
            name: secrets.token_urlsafe(32)
            for name in ("postgres_password", "serialpub_secret", "serialpub_admin_token")
        }
        values["postgres_password"] = make_url(url).password or values["postgres_password"]
        for name, value in values.items():
            (secrets_dir / name).write_text(value + "\n")
        processes: list[subprocess.Popen[str]] = []
        outputs: list[str] = []
        try:
            for service in ("app", "worker"):
                command, env = _as_compose_runs(service, tmp_path, url, port)
                processes.append(
                    subprocess.Popen(
                        command,
                        cwd=ROOT,
                        env=env,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT,
                        text=True,
                        **_OWN_SESSION,
                    )
                )
            app, worker = processes
            base = f"http://127.0.0.1:{port}"
            beat = tmp_path / "serialpub-worker-alive"
            for _ in range(240):
                if app.poll() is not None or worker.poll() is not None:
                    break
                with contextlib.suppress(OSError):
                    with urllib.request.urlopen(f"{base}/readyz", timeout=2) as response:
                        if response.status == 200 and beat.exists():
                            break
                time.sleep(0.25)
            assert app.poll() is None and worker.poll() is None, "a service died at start"
            assert beat.exists(), "the worker never beat"
            admin = values["serialpub_admin_token"]
            _call(
                "POST",
                f"{base}/v1/series",
                admin,
                json.dumps(
                    {
                        "name": "compose",
                        "method": "sanony",
                        "private_terms": ["HIV"],
                        "params": {"r_th": 2, "cluster_size": 4},
                    }
                ).encode(),
            )
            publisher = _call(
                "POST",
                f"{base}/v1/keys",
                admin,
                json.dumps({"role": "publisher", "series": "compose"}).encode(),
            )["key"]
            corpus = "".join(
                f"t{i % 7} t{i % 5} {'HIV' if i % 3 == 0 else 'u'}\n" for i in range(40)
            )
            published = _call(
                "POST",
                f"{base}/v1/series/compose/releases?wait=true",
                publisher,
                corpus.encode(),
                "text/plain",
            )
            assert published["release"]["release_no"] == 1
            environments = [text for p in processes for text in _environments(p.pid)]
            # serve's supervisor and its two uvicorn workers; the worker and its fork server
            assert len(environments) >= 5, environments
            for text in environments:
                for name, value in values.items():
                    assert value not in text, f"{name} in a process's environment"
        finally:
            outputs = [_stop(process) for process in processes]
    for output in outputs:
        assert "DATABASE_URL holds a password" not in output, output


@pytest.mark.parametrize("resolve", ["database_url", "existing_database_url"])
def test_the_cli_resolves_the_password_without_exporting_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, resolve: str
) -> None:
    """In the process itself (its /proc environ shows only what it started with): the URL the
    commands use holds the password, ``os.environ`` (which every child inherits) does not, and
    reading the settings again (as uvicorn's workers do) still works."""
    password = secrets.token_urlsafe(16)
    path = tmp_path / "postgres_password"
    path.write_text(password + "\n")
    for key in list(os.environ):
        if key.startswith(("DATABASE_", "SERIALPUB_")):
            monkeypatch.delenv(key)
    monkeypatch.setenv("DATABASE_URL", "postgresql+psycopg://serialpub@db:5432/serialpub")
    monkeypatch.setenv("DATABASE_PASSWORD_FILE", str(path))
    get_settings.cache_clear()
    try:
        url = getattr(cli_module, resolve)()
        again = get_settings().database_url
    finally:
        get_settings.cache_clear()
    assert make_url(url).password == password
    assert again is not None and make_url(again).password == password
    assert not any(password in value for value in os.environ.values())

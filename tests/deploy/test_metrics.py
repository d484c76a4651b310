"""Metrics as compose deploys the service: ``serve --workers 2`` answers one exposition, the sum
of its processes, whichever of them a scrape reaches; ``serialpub worker`` serves its own jobs'
metrics; a process killed while it ran a job does not count as running one for ever."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from tests.api.paper import body
from tests.support.database import ROOT, fresh_database

pytestmark = [pytest.mark.db, pytest.mark.slow]

TOKEN = "metrics-admin-token-0123456789"
ADMIN = {"Authorization": f"Bearer {TOKEN}"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _environment(url: str, **more: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DATABASE_", "SERIALPUB_", "PROMETHEUS_"))
    }
    env.update(
        DATABASE_URL=url,
        SERIALPUB_ADMIN_TOKEN=TOKEN,
        SERIALPUB_SECRET="metrics-test-secret",
        SERIALPUB_LOG_LEVEL="WARNING",
        PYTHONPATH=str(ROOT),
        **more,
    )
    return env


@contextlib.contextmanager
def _service(args: list[str], env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """``python -m app ARGS`` in a process group of its own, stopped (SIGTERM, then SIGKILL
    to the group) at the end."""
    process = subprocess.Popen(
        [sys.executable, "-m", "app", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        yield process
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)


def _wait(url: str, process: subprocess.Popen[bytes], within: float = 120) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        assert process.poll() is None, f"{process.args} exited early"
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=2).status_code == 200:
                return
        time.sleep(0.2)
    raise AssertionError(f"{url} never answered")


def _value(text: str, sample: str) -> float | None:
    found = re.search(rf"^{re.escape(sample)} (\S+)$", text, re.MULTILINE)
    return None if found is None else float(found[1])


def test_serve_with_two_workers_and_a_worker_answer_every_count(tmp_path: Path) -> None:
    with fresh_database() as url:
        env = _environment(url, SERIALPUB_IN_PROCESS_WORKER="false")
        api_port, worker_port = _free_port(), _free_port()
        base = f"http://127.0.0.1:{api_port}"
        serve = ["serve", "--port", str(api_port), "--workers", "2"]
        worker = ["worker", "--concurrency", "1", "--metrics-port", str(worker_port)]
        with _service(serve, env) as api, _service(worker, env) as jobs:
            _wait(f"{base}/readyz", api)
            _wait(f"http://127.0.0.1:{worker_port}/metrics", jobs)
            shared = {
                child.environ().get("PROMETHEUS_MULTIPROC_DIR")
                for child in psutil.Process(api.pid).children()
                if "spawn" in " ".join(child.cmdline())
            }
            created = httpx.post(
                f"{base}/v1/series",
                headers=ADMIN,
                json={"name": "m", "private_terms": ["HIV", "cancer", "herpes"]},
            )
            assert created.status_code == 201, created.text
            published = httpx.post(
                f"{base}/v1/series/m/releases?wait=true", headers=ADMIN, json=body(1), timeout=120
            )
            assert published.status_code == 201, published.text
            for _ in range(30):  # a connection each: the two processes share them out
                assert httpx.get(f"{base}/healthz").status_code == 200
            healthz = 'serialpub_http_requests_total{method="GET",route="/healthz",status="200"}'
            seen = [_value(httpx.get(f"{base}/metrics").text, healthz) for _ in range(12)]
            assert seen == [30.0] * 12, seen
            from_worker = httpx.get(f"http://127.0.0.1:{worker_port}/metrics").text
            assert _value(from_worker, 'serialpub_jobs_total{status="succeeded"}') == 1.0
            assert _value(from_worker, 'serialpub_rows_published_total{method="sanony"}') == 6.0
        # The directory serve made for its processes (one for both) is gone with it.
        (directory,) = shared
        assert directory is not None and not Path(directory).exists()


_RUNNING = 'serialpub_jobs_running{kind="publish"}'

_COUNT_AND_HANG = """
import sys, time
from app.observability import JOBS, JOBS_RUNNING
JOBS_RUNNING.labels("publish").inc()
JOBS.labels("succeeded").inc()
print("counted", flush=True)
time.sleep(600)
"""

_EXPOSE = """
import sys
from app.observability import metrics_exposition, start_metrics_process
if sys.argv[1] == "start":
    start_metrics_process()
sys.stdout.write(metrics_exposition().decode())
"""


def _python(code: str, env: dict[str, Any], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


def test_a_killed_process_stops_counting_as_running_a_job(tmp_path: Path) -> None:
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    hung = subprocess.Popen(
        [sys.executable, "-c", _COUNT_AND_HANG],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert hung.stdout is not None and hung.stdout.readline().strip() == "counted"
        alive = _python(_EXPOSE, env, "start")
        assert _value(alive, _RUNNING) == 1.0  # its process is alive: it runs a job
    finally:
        hung.kill()
        hung.wait(timeout=30)
    # Killed: it could not say it stopped. Summed as it left it, until a process starts.
    assert _value(_python(_EXPOSE, env, "read"), _RUNNING) == 1.0
    after = _python(_EXPOSE, env, "start")
    assert _value(after, _RUNNING) in (None, 0.0)
    # What it counted happened: its counters stay.
    assert _value(after, 'serialpub_jobs_total{status="succeeded"}') == 1.0

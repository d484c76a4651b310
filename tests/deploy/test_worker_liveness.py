"""A worker's liveness: it touches SERIALPUB_WORKER_HEARTBEAT_FILE; the health check reads it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.settings import Settings
from tests.support.database import ROOT

pytestmark = [pytest.mark.anyio, pytest.mark.db]


def _check(beat: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SERIALPUB_WORKER_HEARTBEAT_FILE": str(beat)}
    return subprocess.run(
        [sys.executable, "-m", "app", "healthcheck", "--worker", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


async def test_worker_beats_and_the_check_reads_the_beat(
    settings: Settings, tmp_path: Path
) -> None:
    from app.jobs.worker import run_worker
    from app.runtime import start_runtime

    beat = tmp_path / "alive"
    assert _check(beat).returncode == 1  # not started
    runtime = await start_runtime(settings.model_copy(update={"worker_heartbeat_file": beat}))
    worker = asyncio.create_task(run_worker(runtime))
    try:
        for _ in range(200):
            if beat.exists():
                break
            await asyncio.sleep(0.05)
        assert beat.exists(), "the worker never beat"
    finally:
        worker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await worker
        await runtime.db.dispose()
    assert _check(beat).returncode == 0
    stale = time.time() - 120
    os.utime(beat, (stale, stale))
    done = _check(beat, "--max-age", "60")
    assert done.returncode == 1 and "last beat" in done.stderr

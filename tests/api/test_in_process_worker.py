"""The API's in-process worker starts again when it stops on an error (a ``serialpub worker``
process would end, and its container restart it; the API has no such keeper)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from app.api import main

pytestmark = pytest.mark.anyio


async def test_an_in_process_worker_that_stops_on_an_error_starts_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runs: list[int] = []
    running = asyncio.Event()

    async def run_worker(runtime: Any) -> None:
        runs.append(1)
        if len(runs) == 1:
            raise RuntimeError("the queue's statement failed")
        running.set()
        await asyncio.sleep(30)

    import app.jobs.worker

    monkeypatch.setattr(app.jobs.worker, "run_worker", run_worker)
    monkeypatch.setattr(main, "WORKER_RESTART_S", (0.01,))
    task = asyncio.create_task(main._in_process_worker(None))  # type: ignore[arg-type]
    await asyncio.wait_for(running.wait(), 5)
    assert len(runs) == 2
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_an_in_process_worker_that_returns_is_not_started_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runs: list[int] = []

    async def run_worker(runtime: Any) -> None:
        runs.append(1)

    import app.jobs.worker

    monkeypatch.setattr(app.jobs.worker, "run_worker", run_worker)
    await asyncio.wait_for(main._in_process_worker(None), 5)  # type: ignore[arg-type]
    assert runs == [1]

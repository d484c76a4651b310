"""The worker's side tasks end when cancelled, even when a library loses the cancellation.

On Python 3.11, ``asyncio.wait_for`` returns its result when the awaited future completes in
the same loop iteration as the cancellation (CPython gh-86296), and psycopg_pool waits for a
connection so. The stalled-job recovery then slept on as if never cancelled, and a ``serve``
worker that got SIGTERM while starting outlived its parent (app/jobs/worker.py,
``_raise_if_cancelled``). These tests lose the cancellation on purpose, as that race does.
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from app.jobs import worker

pytestmark = pytest.mark.anyio


async def _lose_a_cancellation() -> None:
    """Wait, and return normally if cancelled meanwhile (what the race does)."""
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        pass


async def test_a_cancellation_lost_inside_the_recovery_still_ends_its_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    entered = asyncio.Event()

    async def requeue_dead_here(runtime: Any) -> int:
        return 0

    async def recover_stalled(app: Any, runtime: Any) -> int:
        entered.set()
        await _lose_a_cancellation()
        return 0

    monkeypatch.setattr(worker, "requeue_dead_here", requeue_dead_here)
    monkeypatch.setattr(worker, "recover_stalled", recover_stalled)
    runtime = SimpleNamespace(settings=SimpleNamespace(stalled_after_s=3600.0))
    task = asyncio.create_task(worker._recovery_loop(None, runtime))  # type: ignore[arg-type]
    await asyncio.wait_for(entered.wait(), 5)
    task.cancel()
    # Without the check the loop goes on to sleep for an hour.
    done, _ = await asyncio.wait({task}, timeout=5)
    assert task in done
    assert task.cancelled()


async def test_a_cancellation_lost_inside_the_liveness_check_still_ends_its_loop(
    tmp_path: Any,
) -> None:
    entered = asyncio.Event()

    class _Connection:
        async def __aenter__(self) -> _Connection:
            return self

        async def __aexit__(self, *exc: object) -> None:
            return None

        async def execute(self, statement: object) -> None:
            entered.set()
            await _lose_a_cancellation()

    runtime = SimpleNamespace(db=SimpleNamespace(connect=_Connection))
    task = asyncio.create_task(worker._liveness_loop(runtime, tmp_path / "beat"))  # type: ignore[arg-type]
    await asyncio.wait_for(entered.wait(), 5)
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=5)
    assert task in done
    assert task.cancelled()


async def test_a_task_that_was_not_cancelled_goes_on() -> None:
    """The check raises only for a task that is being cancelled."""
    worker._raise_if_cancelled()  # the test's own task: nothing to raise


async def test_a_worker_that_loses_its_cancellation_while_starting_is_cancelled_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """procrastinate's worker, cancelled in its start (a pool's connection wait), ran on and
    its caller waited for ever; the caller sends the cancellation again after the grace."""
    monkeypatch.setattr(worker, "SIDE_TASK_STOP_S", 0.2)
    started, second_cancel = asyncio.Event(), asyncio.Event()

    async def procrastinate_worker() -> None:
        started.set()
        await _lose_a_cancellation()  # the start: the first cancellation is lost here
        try:
            await asyncio.sleep(30)  # the worker's loop: it runs until cancelled
        except asyncio.CancelledError:
            second_cancel.set()
            raise

    task = asyncio.create_task(worker._until_stopped(procrastinate_worker(), grace_s=0.1))
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=5)
    assert task in done and task.cancelled()
    assert second_cancel.is_set()


async def test_a_worker_that_stops_when_cancelled_is_cancelled_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A worker that honours the cancellation gets its whole grace, and one cancellation."""
    cancellations: list[int] = []
    stopping = asyncio.Event()

    async def procrastinate_worker() -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancellations.append(1)
            stopping.set()
            await asyncio.sleep(0.3)  # its graceful stop, within the grace
            raise

    task = asyncio.create_task(worker._until_stopped(procrastinate_worker(), grace_s=1.0))
    await asyncio.sleep(0.05)
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=5)
    assert task in done and task.cancelled()
    assert cancellations == [1]


def test_a_job_or_worker_the_queue_took_back_restarts_the_worker_rather_than_stop_it() -> None:
    """procrastinate's finish of a job the stalled-job recovery took back (its SQL raises);
    any other statement error still stops the worker."""
    import procrastinate.exceptions
    import psycopg.errors

    def wrapped(cause: Exception) -> procrastinate.exceptions.ConnectorException:
        try:
            raise procrastinate.exceptions.ConnectorException() from cause
        except procrastinate.exceptions.ConnectorException as exc:
            return exc

    taken = psycopg.errors.RaiseException(
        'Job was not found or not in "doing" or "todo" status (job id: 47)'
    )
    assert worker._taken_back(wrapped(taken)) == "job"
    pruned = psycopg.errors.ForeignKeyViolation(
        'insert or update on table "procrastinate_jobs" violates foreign key constraint '
        '"procrastinate_jobs_worker_id_fkey"'
    )
    assert worker._taken_back(wrapped(pruned)) == "worker"
    assert worker._taken_back(wrapped(psycopg.errors.RaiseException("other"))) is None
    assert worker._taken_back(wrapped(psycopg.errors.UndefinedTable("no table"))) is None


async def test_a_worker_cancelled_from_inside_is_an_error_not_a_quiet_end() -> None:
    """procrastinate's worker task ending cancelled while nobody cancelled its caller: an
    error the caller restarts on (the API's in-process worker), not a silent stop."""

    async def procrastinate_worker() -> None:
        raise asyncio.CancelledError

    with pytest.raises(RuntimeError, match="cancelled from inside"):
        await worker._until_stopped(procrastinate_worker(), grace_s=0.1)

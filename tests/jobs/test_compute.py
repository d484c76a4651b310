"""The compute child's hand-off (no database): the event loop keeps running while a large
input crosses, the child builds the transactions and finalises the release, and a
cancellation during the hand-off kills the child at once.

The child is forked from this process (``START_METHOD = "fork"``) so that it runs the
stand-ins set up here: a core that answers at once, and an input reader that waits before it
reads, as a busy child would. A hand-off written on the event loop would then stall the loop
for that wait: the heartbeat below measures it.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Sequence
from typing import Any

import pytest

from app.core import pipeline
from app.core.history import SeriesHistory
from app.core.model import (
    ClusterLedger,
    Publication,
    ReleaseLedger,
    Transaction,
    release_from_counts,
)
from app.io.compact import CorpusBuilder, Limits
from app.jobs import compute
from app.jobs.handoff import HandOff, pack_history
from app.services.payload import encode_corpus

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="the stand-ins reach the child by fork"),
]

N_ROWS = 30_000
#: How long the stand-in child waits before it reads its input.
READ_DELAY = 1.5


def _fake_publish(
    method: str,
    history: SeriesHistory,
    corpus: Sequence[Transaction],
    private_terms: frozenset[str],
    params: Any,
    progress: Any = None,
) -> Publication:
    """The core's stand-in: one cluster; the report says what the child was handed."""
    release = release_from_counts(0, [([("arson",)], {}, {}, 0)], {}, {})
    ledger = ReleaseLedger([ClusterLedger()])
    return Publication(
        release,
        ledger,
        {
            "rows": len(corpus),
            "past": len(history.releases),
            "past_rows": history.releases[0].n_rows,
        },
    )


def _handoff(past_rows: int = 50_000) -> HandOff:
    builder = CorpusBuilder(b"secret", Limits())
    for k in range(N_ROWS):
        builder.add([f"t{k % 997}", f"u{k % 1009}", "hiv" if k % 3 else "arson"], {"item": k})
    # Distinct rows: several MB packed, far more than a pipe holds.
    past = release_from_counts(
        1, [([(f"a{k}", f"b{k}") for k in range(past_rows)], {}, {}, 0)], {}, {}
    )
    history = SeriesHistory([past], [ReleaseLedger([ClusterLedger()])])
    releases, state = pack_history(history, [None])
    return HandOff(
        method="sanony",
        params=None,
        payload=encode_corpus(builder.build()),
        series_terms=["HIV"],
        extra_terms=[],
        private_match="casefold",
        releases=releases,
        state=state,
        label="day-2",
    )


@pytest.fixture
def stand_ins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compute, "START_METHOD", "fork")
    monkeypatch.setattr(pipeline, "publish", _fake_publish)
    read = compute._read_input

    def slow_read(inbox: Any) -> HandOff:
        time.sleep(READ_DELAY)
        return read(inbox)

    monkeypatch.setattr(compute, "_read_input", slow_read)


async def _heartbeat(gaps: list[float]) -> None:
    last = time.perf_counter()
    while True:
        await asyncio.sleep(0.01)
        now = time.perf_counter()
        gaps.append(now - last)
        last = now


async def test_the_loop_keeps_running_while_the_input_crosses(stand_ins: None) -> None:
    handoff = _handoff()
    assert len(handoff.payload) + len(handoff.releases[0]) > 1 << 20
    gaps: list[float] = []
    beat = asyncio.create_task(_heartbeat(gaps))
    phases: list[str] = []
    started = time.perf_counter()
    computed = await compute.publish_isolated(handoff, lambda phase, _: phases.append(phase))
    elapsed = time.perf_counter() - started
    beat.cancel()
    assert elapsed >= READ_DELAY
    # Written on the loop, the input would have stalled it for READ_DELAY at least.
    assert max(gaps) < READ_DELAY / 3, max(gaps)
    assert len(gaps) > 20
    # The child built the transactions from the payload and unpacked the history...
    report = computed.publication.report
    assert {k: report[k] for k in ("rows", "past", "past_rows")} == {
        "rows": N_ROWS,
        "past": 1,
        "past_rows": 50_000,
    }
    assert phases == ["prepare"]
    # ... matched the private terms as of the job (casefold: "hiv" is HIV, and said so),
    # and finalised the release it packed.
    assert computed.private_terms == {"HIV"}
    assert [w["term"] for w in report["ingest_warnings"]] == ["hiv"]  # type: ignore[attr-defined]
    release = computed.publication.release
    assert (release.release_no, release.label) == (2, "day-2")
    assert release.private_terms == {"HIV"}


async def test_a_cancellation_during_the_hand_off_kills_the_child(stand_ins: None) -> None:
    before = set(multiprocessing.active_children())
    task = asyncio.create_task(compute.publish_isolated(_handoff()))
    await asyncio.sleep(0.5)  # started; the child waits before reading its input
    children = set(multiprocessing.active_children()) - before
    assert len(children) == 1
    started = time.perf_counter()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.perf_counter() - started < 1.0
    assert not any(child.is_alive() for child in children)


def _killed_publish(*args: Any, **kwargs: Any) -> Publication:
    """The core's stand-in for a child the kernel kills (out of memory): SIGKILL, no answer."""
    os.kill(os.getpid(), signal.SIGKILL)
    raise AssertionError("unreachable: SIGKILL cannot be caught")


def _exiting_publish(*args: Any, **kwargs: Any) -> Publication:
    """A child that ends without an answer, killed by no signal."""
    os._exit(3)


async def test_a_child_killed_by_a_signal_says_which(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before, a killed child and one that failed were one ``ComputeCrashed`` ("exited
    without an answer"), and the job failed ``internal_error`` at once."""
    monkeypatch.setattr(compute, "START_METHOD", "fork")
    monkeypatch.setattr(pipeline, "publish", _killed_publish)
    with pytest.raises(compute.ComputeKilled) as killed:
        await compute.publish_isolated(_handoff(past_rows=10))
    assert killed.value.signal == "SIGKILL"
    assert "killed by SIGKILL" in str(killed.value)
    monkeypatch.setattr(pipeline, "publish", _exiting_publish)
    with pytest.raises(compute.ComputeCrashed) as crashed:
        await compute.publish_isolated(_handoff(past_rows=10))
    assert not isinstance(crashed.value, compute.ComputeKilled)
    assert "exit status 3" in str(crashed.value)

"""The core's publication in a child process: series publish in parallel on every core, and a
cancelled job stops at once.

The core is pure Python: threads would share one interpreter lock, so two series "in
parallel" would take turns, and a thread cannot be stopped. A child process per running job
gives each job its own core, and killing it is an immediate, clean cancellation (the child
writes nothing: the job's transaction is in the parent). The worker's concurrency bounds how
many children exist at once.

Children come from a fork server on Linux: a clean, single-threaded process that imported the
core once, forked per job in milliseconds. Forking the worker itself would be quicker still
but unsafe: its other threads (risk computations, blocking reads) may hold a lock at that
instant, and the child would wait for it for ever (a job stuck in ``running`` with a healthy
heartbeat). Elsewhere children are spawned.

The worker starts the fork server before its first job, and the service before it answers
(:func:`ready_to_compute`), so that no job waits for the server's imports: numpy, scipy, the
core and every method, which a 40-row release, started first, spent 2.2-3.3 s of its ``ipc``
phase waiting for (its work took 0.05 s). The server only forks: each job still computes in
a child of its own, forked from the server's pristine state and gone when the job ends, so a
job's memory goes back to the system, no job sees another's objects, a cancelled job's child
is killed alone, and a child the kernel kills for its memory takes only its job with it. A
server that died is started again by the next job.

The input crosses as bytes (:mod:`app.jobs.handoff`: the job's payload, the past
releases packed once), written to the child by a thread after it started: nothing is pickled
or written on the event loop, which the worker shares with its heartbeat and the API. The
child builds the core's transactions itself. Progress and the result come back over a pipe;
the new release comes back packed, ready for the next job's hand-off.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import importlib
import multiprocessing
import multiprocessing.connection
import signal
import sys
from collections.abc import Callable
from typing import Any

from app.core import errors as core_errors
from app.core import pipeline
from app.core.model import Publication
from app.core.progress import ProgressCallback
from app.core.risk.assess import ReleaseRisk, assess_release
from app.core.risk.total_exposure import exposure_warning
from app.jobs.handoff import (
    HandOff,
    pack_release,
    prepare,
    share_rows,
    unpack_history,
    unpack_release,
)
from app.methods.registry import all_methods
from app.services.in_clear import published_earlier_warnings

__all__ = [
    "publish_isolated",
    "preload",
    "start_server",
    "ready_to_compute",
    "ComputeCrashed",
    "ComputeKilled",
    "Computed",
]


def _method_modules() -> list[str]:
    """The methods' modules, which their publishers import on first use: imported once by
    the fork server (or the worker, when it forks), each child starts with them (0.4 s saved
    per job for Sanony)."""
    return [
        "app.methods.registry",
        *dict.fromkeys(module for method in all_methods() for module in method.modules),
    ]


def preload() -> None:
    """Import every method's module now, so that forked children do not each import them."""
    for module in _method_modules():
        importlib.import_module(module)


class ComputeCrashed(RuntimeError):
    """The child process failed without an answer, or died."""


class ComputeKilled(ComputeCrashed):
    """The child process was killed by a signal (``kill -9``; the kernel's out-of-memory
    killer sends SIGKILL): nothing of the job's own went wrong, so it is run again."""

    def __init__(self, signal_name: str) -> None:
        super().__init__(f"the publication process was killed by {signal_name}")
        self.signal = signal_name


#: How children start. Tests that put a stand-in for the core in place set ``"fork"``, so that
#: the child runs it.
START_METHOD = "forkserver" if sys.platform == "linux" else "spawn"


def _context() -> multiprocessing.context.BaseContext:
    context = multiprocessing.get_context(START_METHOD)
    if START_METHOD == "forkserver":
        # Takes effect when the server starts (start_server, else the first job): it imports
        # these once. This module too: each child runs _child from it.
        context.set_forkserver_preload(
            ["app.core.pipeline", "app.jobs.handoff", "app.jobs.compute", *_method_modules()]
        )
    return context


def _ready() -> None:
    """A child that does nothing: forked, it shows the fork server is up and has imported."""


def start_server() -> None:
    """Start the fork server, and return once it has imported the core and forks at once
    (blocking: run it in a thread). The imports are the server's, in a process of its own:
    this process goes on meanwhile. Nothing to do when children are forked from this process
    or spawned."""
    if START_METHOD != "forkserver":
        return
    # The server answers a fork request once its imports are done: a child that does nothing
    # returns then.
    process = _context().Process(  # type: ignore[attr-defined]
        target=_ready, name="serialpub-compute-ready", daemon=True
    )
    process.start()
    process.join()


async def ready_to_compute() -> None:
    """What a worker does before its first job, so that the job waits for no import: the fork
    server started, having imported the core (:func:`start_server`), or, where children are
    forked from this process, the core imported here (:func:`preload`). Spawned children
    import it themselves."""
    if START_METHOD == "fork":
        await asyncio.to_thread(preload)
    elif START_METHOD == "forkserver":
        await _server_started()


async def _server_started() -> None:
    try:
        await asyncio.to_thread(start_server)
    except Exception:
        # Not the worker's failure: the first job starts the server again, and fails with
        # the reason if it cannot. (Logging is imported here only: the children need none.)
        from app.observability import logger

        logger("serialpub.jobs").exception("the compute fork server did not start")


@dataclasses.dataclass(slots=True)
class Computed:
    """A child's answer: the publication, this release's private terms (the series' as of
    the job, with the release's extra ones) and the new release packed for the next job's
    hand-off (:func:`app.jobs.handoff.pack_release`)."""

    publication: Publication
    private_terms: frozenset[str]
    packed: bytes
    #: The new release's risk summary as of the series with it (no rows), at the hand-off's
    #: ``risk_r_th``; ``None`` when none was asked for.
    risk: ReleaseRisk | None = None


def _child(
    conn: multiprocessing.connection.Connection, inbox: multiprocessing.connection.Connection
) -> None:
    def progress(phase: str, fraction: float) -> None:
        conn.send(("progress", phase, fraction))

    # Ctrl-C and systemd's stop signal the whole process group: the worker decides (it lets the
    # job finish within its grace, then kills this child and requeues the job); a child that
    # died here would fail the job instead.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        handoff = _read_input(inbox)
        inbox.close()
        _publish_in_child(conn, handoff, progress)
    except core_errors.CoreError as exc:
        # Core errors pickle without their details (only ``args`` survive): send the parts.
        conn.send(("core_error", type(exc).__name__, exc.message, exc.details))
    except BaseException as exc:  # reported to the parent, which logs it with the job id
        conn.send(("crash", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def _publish_in_child(
    conn: multiprocessing.connection.Connection, handoff: HandOff, progress: ProgressCallback
) -> None:
    # The core reads a past ledger's totals only: its per-cluster part is dropped as each
    # release is unpacked (unpack_history).
    history = unpack_history(handoff.releases, handoff.state, cluster_ledgers=False)
    handoff.releases, handoff.state = [], b""  # the bytes are not needed past this point
    # ``prepare`` runs from here to the core's first phase: the transactions built from the
    # payload, then validated by ``pipeline.publish``.
    progress("prepare", 0.0)
    corpus, private_terms, warnings = prepare(handoff)
    handoff.payload = b""
    # The history and the transactions live until the child exits, and hold no cycles:
    # frozen, the collector's passes during the core's run no longer traverse them.
    gc.freeze()
    publication = pipeline.publish(
        handoff.method, history, corpus, private_terms, handoff.params, progress
    )
    del corpus
    release = publication.release
    release.release_no = history.next_release_no
    release.label = handoff.label
    if not release.private_terms:
        release.private_terms = private_terms
    # The release's risk summary, as the risk endpoint computes it from the public releases:
    # here, where the history is in memory already, rather than in the API after the commit
    # (which loaded every release of the series from PostgreSQL into one request: 9.2 GiB
    # for the API at the fourth release of 10,000,000 lines). A phase of
    # its own in the job.
    risk = None
    if handoff.risk_r_th is not None:
        progress("risk", 0.0)
        releases = [*history.releases, release]
        risk = assess_release(releases, len(releases) - 1, handoff.risk_r_th, with_rows=False)
        del releases
    # The core is done: what follows (packing, the pipe, unpacking) is the hand-off's.
    conn.send(("core_done",))
    if warnings:
        publication.report["ingest_warnings"] = warnings
    # The warnings about terms (spellings of a private term, a private term the snapshot
    # never names) and a term this release makes private that earlier releases printed in
    # clear: the job's warnings say so (the publisher reads them in the job and in the
    # wait=true answer), not the auditors' report alone.
    added = [
        *warnings,
        *published_earlier_warnings(history.releases, private_terms, handoff.private_match),
    ]
    # What the release's published counterfeit total gives away, estimated from the risk
    # just computed (docs/attacks.md): in the report, and a warning when it is material.
    if risk is not None and risk.published_total is not None:
        publication.report["published_total"] = dataclasses.asdict(risk.published_total)
        exposure = exposure_warning(risk.published_total, risk.r_th)
        if exposure is not None:
            added.append(exposure)
    if added:
        before = publication.report.get("warnings")
        publication.report["warnings"] = [*(before if isinstance(before, list) else []), *added]
    # Final from here on: these bytes are what the next job of the series hands to its child.
    share_rows(release)
    packed = pack_release(release, publication.ledger)
    # Disassociation's result (the chunks' alignment with their records) crosses too: it is
    # the ground truth of the job's semantic audit, kept in memory only (design.md §11).
    conn.send(
        (
            "result",
            publication.report,
            publication.extras,
            private_terms,
            risk,
        )
    )
    conn.send_bytes(packed)


def _read_input(inbox: multiprocessing.connection.Connection) -> HandOff:
    """The :class:`HandOff` that :func:`_feed` writes."""
    handoff: HandOff
    handoff, n_releases = inbox.recv()
    handoff.payload = inbox.recv_bytes()
    handoff.releases = [inbox.recv_bytes() for _ in range(n_releases)]
    handoff.state = inbox.recv_bytes()
    return handoff


def _feed(feeder: multiprocessing.connection.Connection, handoff: HandOff) -> None:
    """Write ``handoff`` to the child (runs in a thread: each write blocks until the child has
    read most of it). The bytes go as they are, not copied into one pickle."""
    head = dataclasses.replace(handoff, payload=b"", releases=[], state=b"")
    try:
        feeder.send((head, len(handoff.releases)))
        feeder.send_bytes(handoff.payload)
        for blob in handoff.releases:
            feeder.send_bytes(blob)
        feeder.send_bytes(handoff.state)
    except OSError:
        pass  # the child died (or was killed): its exit reaches the reading thread as EOF


def _start(
    process: multiprocessing.process.BaseProcess, *child_ends: multiprocessing.connection.Connection
) -> None:
    """Start the child (runs in a thread: a fork, or the fork server's start on the first
    job, which imports the core), then close our copies of its pipe ends, so that its exit
    ends our reads with EOF and our writes with an error."""
    try:
        process.start()
    finally:
        for end in child_ends:
            end.close()


def _receive(
    conn: multiprocessing.connection.Connection,
    progress: ProgressCallback | None,
    core_done: Callable[[], None] | None,
) -> tuple[Any, ...]:
    """Relay progress until the final message (runs in a thread: ``recv`` blocks)."""
    while True:
        try:
            message: tuple[Any, ...] = conn.recv()
            if message[0] == "result":
                return ("result", _result(message, conn.recv_bytes()))
        except (EOFError, OSError):
            return ("exited",)
        if message[0] == "core_done":
            if core_done is not None:
                core_done()
        elif message[0] != "progress":
            return message
        elif progress is not None:
            progress(message[1], message[2])


async def publish_isolated(
    handoff: HandOff,
    progress: ProgressCallback | None = None,
    core_done: Callable[[], None] | None = None,
) -> Computed:
    """:func:`app.core.pipeline.publish` of ``handoff`` in a child process; cancelling kills
    the child. ``progress`` sees ``prepare`` and the core's phases; ``core_done`` is called
    when the core has returned, before the result crosses back."""
    context = _context()
    receiver, sender = context.Pipe(duplex=False)
    inbox, feeder = context.Pipe(duplex=False)
    process = context.Process(  # type: ignore[attr-defined]
        target=_child,
        args=(sender, inbox),
        name=f"serialpub-publish-{handoff.method}",
        daemon=True,
    )
    starting = asyncio.ensure_future(asyncio.to_thread(_start, process, sender, inbox))
    receiving = asyncio.ensure_future(asyncio.to_thread(_receive, receiver, progress, core_done))
    feeding: asyncio.Future[None] | None = None
    try:
        await asyncio.shield(starting)
        feeding = asyncio.ensure_future(asyncio.to_thread(_feed, feeder, handoff))
        message = await asyncio.shield(receiving)
    finally:
        # Cancelled (or done): kill the child, whose exit ends the reading and writing
        # threads; wait for them before closing the pipes under them.
        await asyncio.wait([starting])
        started = not starting.cancelled() and starting.exception() is None
        if started and process.is_alive():
            process.kill()
        if started:
            await asyncio.to_thread(process.join)
        threads: list[asyncio.Future[Any]] = [receiving]
        if feeding is not None:
            threads.append(feeding)
        await asyncio.wait(threads)
        receiver.close()
        feeder.close()
    return _answer(message, process.exitcode if started else None)


def _result(message: tuple[Any, ...], packed: bytes) -> Computed:
    """The child's ``result`` message and the packed release that follows it (unpacked here,
    in the reading thread: at 1M rows that is about a second)."""
    _, report, extras, private_terms, risk = message
    release, ledger = unpack_release(packed)
    return Computed(
        Publication(release, ledger, report, extras),
        private_terms,
        packed,
        risk,
    )


def _answer(message: tuple[Any, ...], exitcode: int | None) -> Computed:
    """What the child answered, or why it did not: ``exitcode`` is its exit status once
    ended (negative: the signal that killed it)."""
    kind = message[0]
    if kind == "result":
        computed: Computed = message[1]
        return computed
    if kind == "core_error":
        error_type = getattr(core_errors, message[1], core_errors.CoreError)
        raise error_type(message[2], message[3])
    if kind == "exited":
        if exitcode is not None and exitcode < 0:
            raise ComputeKilled(_signal_name(-exitcode))
        raise ComputeCrashed(
            f"the publication process exited without an answer (exit status {exitcode})"
        )
    raise ComputeCrashed(message[1])


def _signal_name(number: int) -> str:
    """``SIGKILL`` for 9; the number itself for a signal this platform does not name."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"

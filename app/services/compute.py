"""The core's publication in a child process: series publish in parallel on every core, and a
cancelled job stops at once.

The core is pure Python: threads would share one interpreter lock, so two series "in
parallel" would take turns, and a thread cannot be stopped. A child process per running job
gives each job its own core, and killing it is an immediate, clean cancellation (the child
writes nothing: the job's transaction is in the parent). The worker's concurrency bounds how
many children exist at once.

Children come from a fork server on Linux: a clean, single-threaded process that imported the
core once, forked per job in milliseconds; the input is pickled to it. Forking the worker
itself would be quicker still but unsafe: its other threads (risk computations, blocking
reads) may hold a lock at that instant, and the child would wait for it for ever (a job stuck
in ``running`` with a healthy heartbeat). Elsewhere children are spawned. Progress and the
result come back over a pipe.
"""

from __future__ import annotations

import asyncio
import importlib
import multiprocessing
import multiprocessing.connection
import signal
import sys
from collections.abc import Sequence
from typing import Any

from app.core import errors as core_errors
from app.core import pipeline
from app.core.history import SeriesHistory
from app.core.model import Publication, Transaction
from app.core.progress import ProgressCallback
from app.methods.registry import all_methods

__all__ = ["publish_isolated", "preload", "ComputeCrashed"]

def _method_modules() -> list[str]:
    """The methods' modules, which their publishers import on first use: imported once by
    the fork server (or the worker, when it forks), each child starts with them (0.4 s saved
    per job for Sanony)."""
    return ["app.methods.registry",
            *dict.fromkeys(module for method in all_methods() for module in method.modules)]


def preload() -> None:
    """Import every method's module now, so that forked children do not each import them."""
    for module in _method_modules():
        importlib.import_module(module)


class ComputeCrashed(RuntimeError):
    """The child process died without an answer (killed by the OS, out of memory)."""


#: How children start. Tests that put a stand-in for the core in place set ``"fork"``, so that
#: the child runs it.
START_METHOD = "forkserver" if sys.platform == "linux" else "spawn"


def _context() -> multiprocessing.context.BaseContext:
    context = multiprocessing.get_context(START_METHOD)
    if START_METHOD == "forkserver":
        # Takes effect when the server starts (first job): it imports these once.
        context.set_forkserver_preload(["app.core.pipeline", *_method_modules()])
    return context


def _child(conn: multiprocessing.connection.Connection, method: str, history: SeriesHistory,
           corpus: Sequence[Transaction], private_terms: frozenset[str],
           params: Any) -> None:
    def progress(phase: str, fraction: float) -> None:
        conn.send(("progress", phase, fraction))

    # Ctrl-C and systemd's stop signal the whole process group: the worker decides (it lets the
    # job finish within its grace, then kills this child and requeues the job); a child that
    # died here would fail the job instead.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        result = pipeline.publish(method, history, corpus, private_terms, params, progress)
    except core_errors.CoreError as exc:
        # Core errors pickle without their details (only ``args`` survive): send the parts.
        conn.send(("core_error", type(exc).__name__, exc.message, exc.details))
    except BaseException as exc:  # reported to the parent, which logs it with the job id
        conn.send(("crash", f"{type(exc).__name__}: {exc}"))
    else:
        conn.send(("result", result))
    finally:
        conn.close()


def _receive(conn: multiprocessing.connection.Connection,
             progress: ProgressCallback | None) -> tuple[Any, ...]:
    """Relay progress until the final message (runs in a thread: ``recv`` blocks)."""
    while True:
        try:
            message: tuple[Any, ...] = conn.recv()
        except (EOFError, OSError):
            return ("crash", "the publication process exited without an answer")
        if message[0] != "progress":
            return message
        if progress is not None:
            progress(message[1], message[2])


async def publish_isolated(method: str, history: SeriesHistory,
                           corpus: Sequence[Transaction], private_terms: frozenset[str],
                           params: Any,
                           progress: ProgressCallback | None = None) -> Publication:
    """:func:`app.core.pipeline.publish` in a child process; cancelling kills the child."""
    context = _context()
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(  # type: ignore[attr-defined]
        target=_child, args=(sender, method, history, corpus, private_terms, params),
        name=f"serialpub-publish-{method}", daemon=True,
    )
    process.start()
    sender.close()  # the child holds the only writer: its exit ends our reads with EOF
    receiving = asyncio.ensure_future(asyncio.to_thread(_receive, receiver, progress))
    try:
        message = await asyncio.shield(receiving)
    finally:
        # Cancelled (or done): kill the child, whose exit ends the reading thread with EOF;
        # wait for both before closing the pipe under that thread.
        if process.is_alive():
            process.kill()
        await asyncio.to_thread(process.join)
        await asyncio.wait([receiving])
        receiver.close()
    kind = message[0]
    if kind == "result":
        publication: Publication = message[1]
        return publication
    if kind == "core_error":
        error_type = getattr(core_errors, message[1], core_errors.CoreError)
        raise error_type(message[2], message[3])
    raise ComputeCrashed(message[1])

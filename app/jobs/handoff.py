"""What a job hands to its compute child, in a compact form, and how the child unpacks it.

The child used to receive the core's input as Python objects: a million ``Transaction``
objects and every past release, pickled by the worker and unpickled by the child (measured
at 1M lines: 13.6 s of CPU against 0 earlier releases, 30.9 s against 4, and the pickling ran
on the worker's event loop). Now it receives bytes:

- the job's **payload** as queued (:mod:`app.io.compact`, about 11 MB at 1M lines) and what
  it needs to match private terms; the child builds the transactions itself
  (:func:`prepare`), so no transaction is ever pickled;
- the **history** as one pickle per past release (its public release and ledger together,
  :func:`pack_release`), made once and kept by the worker beside its release cache: a
  release the worker published itself arrives packed by the child that computed it, so the
  worker never pickles it; only a release it loaded from PostgreSQL is packed, once;
- the method's private **state** (Wong's statistics, Inv's signatures), pickled per job:
  it is read from PostgreSQL every job anyway.

Pickled past releases were measured against term-id arrays rebuilt in the child: as fast
to unpack (4.9 s against 4.7 s of CPU for four 1M-row releases, collector on), and they
carry the ledgers and any method's layout without a second format; see
``benchmarks/experiments/handoff.py``.
"""

from __future__ import annotations

import contextlib
import gc
import pickle
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.core.history import SeriesHistory
from app.core.model import PublishedRelease, ReleaseLedger, Row, Transaction
from app.io.terms import PrivateMatch
from app.services.payload import decode_corpus, publication_input

__all__ = [
    "HandOff",
    "pack_release",
    "unpack_release",
    "pack_history",
    "unpack_history",
    "prepare",
    "share_rows",
    "collector_paused",
]

#: Protocol 5: bytes-like values (a layout's arrays) are written as they are.
_PROTOCOL = 5


@dataclass(slots=True)
class HandOff:
    """Everything a compute child needs for one job, as plain values and bytes."""

    method: str
    params: Any
    #: The job's queued payload (:func:`app.services.payload.decode_corpus` reads it).
    payload: bytes
    series_terms: list[str]
    extra_terms: list[str]
    private_match: PrivateMatch
    #: One :func:`pack_release` per past release, oldest first.
    releases: list[bytes] = field(default_factory=list)
    #: The pickled keyword arguments of ``SeriesHistory`` other than releases and ledgers.
    state: bytes = b""
    label: str | None = None
    #: The r_th of the release's risk summary, computed in the child beside the release and
    #: stored with it (``app.services.risk.default_r_th``); ``None``: none computed.
    risk_r_th: float | None = None


def pack_release(release: PublishedRelease, ledger: ReleaseLedger) -> bytes:
    """One past release as the child receives it: its public release and ledger, pickled
    together (equal rows of the release are written once: pickle's memo)."""
    return pickle.dumps((release, ledger), protocol=_PROTOCOL)


def share_rows(release: PublishedRelease) -> None:
    """Make equal rows of ``release`` one tuple. The core builds a row per transaction; shared,
    each distinct row is packed once (pickle's memo), so the packed release is smaller and
    quicker to unpack, in the worker and in every later job's child, and the worker's cached
    copy is smaller. The rows' values and order are unchanged."""
    shared: dict[Row, Row] = {}
    for cluster in release.clusters:
        cluster.rows = [shared.setdefault(row, row) for row in cluster.rows]


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a large structure without cycles is built.

    Every collection pass traverses the container objects built so far: unpickling a
    1M-row release took 3.5 times the CPU with it on, building 1M transactions 1.7 times
    (``benchmarks/experiments/handoff.py``). Reference counting still frees everything at once. The
    collector is process-wide: when threads overlap here, the first to pause it resumes it.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def unpack_release(blob: bytes) -> tuple[PublishedRelease, ReleaseLedger]:
    with collector_paused():
        release, ledger = pickle.loads(blob)
    return release, ledger


def pack_history(
    history: SeriesHistory, packed: Sequence[bytes | None]
) -> tuple[list[bytes], bytes]:
    """The history's releases as :func:`pack_release` blobs (``packed[k]`` when the worker
    already has it, else packed now) and its state, pickled.

    Slow for a release not yet packed (about 2 s of CPU per 1M rows): run it off the event
    loop."""
    if len(history.ledgers) != len(history.releases) or len(packed) != len(history.releases):
        raise ValueError("a history's releases, ledgers and packed releases must pair up")
    blobs = [
        blob if blob is not None else pack_release(release, ledger)
        for blob, release, ledger in zip(packed, history.releases, history.ledgers, strict=True)
    ]
    return blobs, pack_state(history)


def pack_state(history: SeriesHistory) -> bytes:
    """The fields of ``history`` other than its releases and ledgers, pickled (what
    :func:`unpack_history` reads beside the packed releases)."""
    return pickle.dumps(
        {"statistics": history.statistics, "signatures": history.signatures}, protocol=_PROTOCOL
    )


def unpack_history(
    releases: Sequence[bytes], state: bytes, *, cluster_ledgers: bool = True
) -> SeriesHistory:
    """The :class:`SeriesHistory` of :func:`pack_history`'s output.

    ``cluster_ledgers=False`` drops each past ledger's per-cluster part as soon as its release
    is unpacked, keeping its totals (``suppressed``, ``global_bag_counterfeits``): what the
    core reads of a past ledger (Sanony's series suppression budget, Kanony's bag). A
    10,000,000-line release has about a million cluster ledgers, about 0.35 GiB in a compute
    child that never reads them; ``tests/jobs/test_handoff.py`` publishes
    with and without them for every method and compares."""
    with collector_paused():
        pairs = []
        for blob in releases:
            release, ledger = unpack_release(blob)
            if not cluster_ledgers:
                ledger = ledger.totals_only()
            pairs.append((release, ledger))
        return SeriesHistory(
            releases=[r for r, _ in pairs],
            ledgers=[led for _, led in pairs],
            **(pickle.loads(state) if state else {}),
        )


def prepare(handoff: HandOff) -> tuple[list[Transaction], frozenset[str], list[dict[str, str]]]:
    """The core's transactions, this release's private terms and the warnings, from the
    payload (:func:`app.services.payload.publication_input`, in the child)."""
    with collector_paused():
        return publication_input(
            decode_corpus(handoff.payload),
            handoff.series_terms,
            handoff.extra_terms,
            handoff.private_match,
        )

"""The compute child's hand-off, in-process (not a test): wall and CPU seconds of each step,
before (transactions and releases as pickled objects) and after (payload and packed
releases as bytes, :mod:`app.jobs.handoff`), at N lines against 0 and K earlier releases.

The corpora are those of ``benchmarks.e2e_publish`` (SeGen over BMS-WebView-2, upsampled,
from ``SERIALPUB_CORPORA_DIR``). The earlier releases are shaped like Sanony's output without
running the core: clusters of 10 consecutive transactions, one row per transaction (its
non-private terms, one tuple each, as the core builds them), the private terms counted per
cluster, a ledger with one entry per row.

    python -m benchmarks.experiments.handoff --lines 1000000 --against 0 4 --repeats 3

Steps (``where``: the process that pays; ``loop``: on the worker's event loop):

before  prepare        worker   payload -> transactions (``publication_input``)
        pickle         loop     ``process.start()`` pickling history and transactions
        unpickle       child    the same, unpickled (the worker's write waits for it)
        result         both     the new release pickled by the child, unpickled by the worker
after   pack (warm)    worker   history packed, every release packed before (state only)
        pack (cold)    worker   history packed, no release packed before (after a restart)
        pipe           both     payload and packed releases through a pipe
        unpack         child    packed releases unpickled
        prepare        child    payload -> transactions
        result         both     rows shared and packed by the child, unpacked by the worker
alt.    arrays         child    the history rebuilt from term-id arrays instead of unpickled
"""

from __future__ import annotations

import argparse
import gc
import json
import multiprocessing
import os
import pickle
import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from multiprocessing.reduction import ForkingPickler
from typing import Any, TypeVar

import numpy as np

from app.core.history import SeriesHistory
from app.core.model import (
    ClusterLedger,
    PublishedCluster,
    PublishedRelease,
    ReleaseLedger,
    Transaction,
    make_row,
)
from app.io.compact import CorpusBuilder, Limits
from app.jobs.handoff import (
    HandOff,
    pack_history,
    pack_release,
    prepare,
    share_rows,
    unpack_history,
    unpack_release,
)
from app.methods.registry import get_method
from app.services.payload import decode_corpus, encode_corpus, publication_input
from benchmarks.e2e_publish import series_lines

T = TypeVar("T")
MB = 1 << 20


def timed(fn: Callable[[], T], repeats: int) -> tuple[T, float, float]:
    """``fn()``'s result and the median wall and CPU seconds over ``repeats`` runs."""
    walls, cpus = [], []
    result: Any = None
    for _ in range(repeats):
        result = None
        gc.collect()
        wall, cpu = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return result, statistics.median(walls), statistics.median(cpus)


def payload_of(lines: Sequence[bytes]) -> bytes:
    """The job's payload as the API queues it for a ``text/plain`` body."""
    builder = CorpusBuilder(b"", Limits())
    builder.add_lines([line.decode() for line in lines], 1, None)
    return encode_corpus(builder.build())


def release_like(
    corpus: Sequence[Transaction], private: frozenset[str], release_no: int
) -> tuple[PublishedRelease, ReleaseLedger]:
    clusters, ledgers = [], []
    for c, first in enumerate(range(0, len(corpus), 10)):
        members = corpus[first : first + 10]
        counts = Counter(s for t in members for s in t.terms & private)
        clusters.append(
            PublishedCluster(
                f"c{c + 1}", [make_row(t.terms - private) for t in members], dict(counts), {}, 0
            )
        )
        ledgers.append(ClusterLedger([], 0, 0, 0, [t.individual for t in members], {}))
    release = PublishedRelease(
        release_no, clusters, {}, dict.fromkeys(private, 0.01), private, 0, f"r{release_no}"
    )
    return release, ReleaseLedger(ledgers, {}, {})


# -- the alternative: the history as term-id arrays ------------------------------------------


def to_arrays(release: PublishedRelease) -> dict[str, Any]:
    """A release's rows as ids into its distinct rows, distinct rows as ids into terms."""
    terms: dict[str, int] = {}
    distinct: dict[tuple[str, ...], int] = {}
    row_ids = [distinct.setdefault(row, len(distinct)) for c in release.clusters for row in c.rows]
    flat = [terms.setdefault(t, len(terms)) for row in distinct for t in row]
    return {
        "terms": list(terms),
        "flat": np.array(flat, np.int32),
        "row_ends": np.cumsum([len(r) for r in distinct], dtype=np.int64),
        "rows": np.array(row_ids, np.int32),
        "cluster_ends": np.cumsum([c.size for c in release.clusters], dtype=np.int64),
        "clusters": [
            (c.cluster_id, c.private_counts, c.global_share, c.counterfeits)
            for c in release.clusters
        ],
        "head": (
            release.release_no,
            release.global_bag,
            release.population_rates,
            release.private_terms,
            release.global_counterfeits,
            release.label,
        ),
    }


def from_arrays(data: dict[str, Any]) -> PublishedRelease:
    terms, flat = data["terms"], data["flat"].tolist()
    starts = [0, *data["row_ends"][:-1].tolist()]
    distinct = [
        tuple([terms[i] for i in flat[a:b]])
        for a, b in zip(starts, data["row_ends"].tolist(), strict=True)
    ]
    rows = [distinct[i] for i in data["rows"].tolist()]
    clusters, first = [], 0
    for (cid, pc, gs, cf), end in zip(data["clusters"], data["cluster_ends"].tolist(), strict=True):
        clusters.append(PublishedCluster(cid, rows[first:end], pc, gs, cf))
        first = end
    no, bag, rates, private, gcf, label = data["head"]
    return PublishedRelease(no, clusters, bag, rates, private, gcf, label)


def through_pipe(blobs: Sequence[bytes]) -> None:
    """``blobs`` written to a pipe by one thread and read by another (both release the
    interpreter lock in the system calls, as the worker's feeding thread and the child do)."""
    reader, writer = multiprocessing.Pipe(duplex=False)

    def feed() -> None:
        for blob in blobs:
            writer.send_bytes(blob)

    thread = threading.Thread(target=feed)
    thread.start()
    for _ in blobs:
        reader.recv_bytes()
    thread.join()
    reader.close()
    writer.close()


Past = list[tuple[PublishedRelease, ReleaseLedger]]


def _before(
    row: dict[str, Any], payload: bytes, past: Past, private: frozenset[str], params: Any, r: int
) -> None:
    """The worker prepared the transactions and pickled them with the history as the
    child's arguments; the child pickled the new release back."""
    private_list = sorted(private)
    history = SeriesHistory([p[0] for p in past], [p[1] for p in past])
    corpus, wall, cpu = timed(
        lambda: publication_input(decode_corpus(payload), private_list, [], "casefold")[0], r
    )
    row["before.prepare"] = [round(wall, 3), round(cpu, 3)]
    blob, wall, cpu = timed(
        lambda: bytes(ForkingPickler.dumps(("sanony", history, corpus, private, params))), r
    )
    row["before.pickle"] = [round(wall, 3), round(cpu, 3)]
    row["before.pickle_mb"] = round(len(blob) / MB, 1)
    _, wall, cpu = timed(lambda: pickle.loads(blob), r)
    row["before.unpickle"] = [round(wall, 3), round(cpu, 3)]
    release, ledger = release_like(corpus, private, len(past) + 1)
    result, wall1, cpu1 = timed(lambda: bytes(ForkingPickler.dumps(("result", release, ledger))), r)
    _, wall2, cpu2 = timed(lambda: pickle.loads(result), r)
    row["before.result"] = [round(wall1 + wall2, 3), round(cpu1 + cpu2, 3)]
    row["before.result_mb"] = round(len(result) / MB, 1)


def _after(
    row: dict[str, Any], payload: bytes, past: Past, private: frozenset[str], params: Any, r: int
) -> Past:
    """Bytes cross; the child unpacks the history and builds the transactions. Returns the
    past releases as the worker now caches them (rows shared, from the child's result)."""
    private_list = sorted(private)
    row["after.history_unshared_mb"] = round(sum(len(pack_release(*p)) for p in past) / MB, 1)
    copies = [unpack_release(pack_release(*p)) for p in past]
    for copy in copies:
        share_rows(copy[0])
    shared = SeriesHistory([c[0] for c in copies], [c[1] for c in copies])
    cached: list[bytes | None] = [pack_release(*c) for c in copies]
    row["after.history_mb"] = round(sum(len(b or b"") for b in cached) / MB, 1)
    (blobs, state), wall, cpu = timed(lambda: pack_history(shared, cached), r)
    row["after.pack_warm"] = [round(wall, 3), round(cpu, 3)]
    _, wall, cpu = timed(lambda: pack_history(shared, [None] * len(past)), r)
    row["after.pack_cold"] = [round(wall, 3), round(cpu, 3)]
    _, wall, cpu = timed(lambda: through_pipe([payload, *blobs, state]), r)
    row["after.pipe"] = [round(wall, 3), round(cpu, 3)]
    _, wall, cpu = timed(lambda: unpack_history(blobs, state), r)
    row["after.unpack"] = [round(wall, 3), round(cpu, 3)]
    handoff = HandOff("sanony", params, payload, private_list, [], "casefold", blobs, state)
    corpus, wall, cpu = timed(lambda: prepare(handoff)[0], r)
    row["after.prepare"] = [round(wall, 3), round(cpu, 3)]
    release, ledger = release_like(corpus, private, len(past) + 1)

    def result() -> bytes:
        share_rows(release)
        return pack_release(release, ledger)

    packed, wall1, cpu1 = timed(result, r)
    _, wall2, cpu2 = timed(lambda: unpack_release(packed), r)
    row["after.result"] = [round(wall1 + wall2, 3), round(cpu1 + cpu2, 3)]
    row["after.result_mb"] = round(len(packed) / MB, 1)
    return copies


def _alternative(row: dict[str, Any], shared: Past, r: int) -> None:
    """The past public releases as term-id arrays, rebuilt in the child, against the same
    releases unpickled."""
    arrays = [pickle.dumps(to_arrays(p[0]), protocol=5) for p in shared]
    row["alt.arrays_mb"] = round(sum(map(len, arrays)) / MB, 1)
    _, wall, cpu = timed(lambda: [from_arrays(pickle.loads(a)) for a in arrays], r)
    row["alt.arrays_rebuild_releases_only"] = [round(wall, 3), round(cpu, 3)]
    public = [pickle.dumps(p[0], protocol=5) for p in shared]
    row["alt.pickled_releases_only_mb"] = round(sum(map(len, public)) / MB, 1)
    _, wall, cpu = timed(lambda: [pickle.loads(b) for b in public], r)
    row["alt.unpickle_releases_only"] = [round(wall, 3), round(cpu, 3)]


def measure(args: argparse.Namespace) -> list[dict[str, Any]]:
    releases_lines, private_list = series_lines(args.lines, max(args.against) + 1, args.seed)
    private = frozenset(private_list)
    params = get_method("sanony").parse({"r_th": 8, "cluster_size": 10, "seed": args.seed})
    payloads = [payload_of(lines) for lines in releases_lines]
    del releases_lines
    past: Past = []
    for k, payload in enumerate(payloads[: max(args.against)]):
        corpus = publication_input(decode_corpus(payload), private_list, [], "casefold")[0]
        past.append(release_like(corpus, private, k + 1))
        del corpus
    out = []
    for against in args.against:
        payload = payloads[against]
        row: dict[str, Any] = {
            "lines": args.lines,
            "against": against,
            "payload_mb": round(len(payload) / MB, 1),
        }
        if "before" in args.parts:
            _before(row, payload, past[:against], private, params, args.repeats)
        if "after" in args.parts or "alt" in args.parts:
            shared = _after(row, payload, past[:against], private, params, args.repeats)
            if "alt" in args.parts and against:
                _alternative(row, shared, args.repeats)
        print(json.dumps(row), flush=True)
        out.append(row)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--against", type=int, nargs="+", default=[0, 4])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--parts", nargs="+", default=["before", "after", "alt"])
    args = parser.parse_args(argv)
    print(f"{os.cpu_count()} cores; load average at start {os.getloadavg()[0]:.2f}", flush=True)
    measure(args)
    print(f"load average at end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

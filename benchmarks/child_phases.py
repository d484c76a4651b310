"""Where a compute child's memory goes, phase by phase (not a test).

Does in one process what the job's compute child does for a first release (no history):
builds the core's transactions from a compact corpus (:func:`app.services.payload.
publication_input`, the ``prepare`` phase), then ``pipeline.publish`` (sanony r_th 8,
clusters of 10, seed 1), sampling the resident memory every 20 ms and noting, at each progress
report, the peak since the previous one. The corpus: ``--lines`` lines of ``--terms`` distinct
five-digit codes drawn uniformly from ``--vocabulary`` (benchmarks.upload_caps.wide_lines),
nearly every line distinct: the worst case per term.

    python -m benchmarks.child_phases --lines 1000000 --terms 10
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import psutil

from app.core import pipeline
from app.core.history import SeriesHistory
from app.core.params import parse_params
from app.services.ingest import Limits, read_corpus
from app.services.payload import publication_input
from benchmarks.upload_caps import wide_lines


class Phases:
    """The process's RSS every 20 ms; the seconds and peak of each phase, named by the
    progress reports (a phase's peak includes everything still held from before it)."""

    def __init__(self) -> None:
        self._process = psutil.Process()
        self.phase = "start"
        self.peaks: dict[str, int] = {}
        self.started = time.perf_counter()
        self.seconds: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            self.sample()

    def sample(self) -> None:
        rss = self._process.memory_info().rss
        self.peaks[self.phase] = max(self.peaks.get(self.phase, 0), rss)

    def enter(self, phase: str, fraction: float = 0.0) -> None:
        if phase != self.phase:
            self.sample()
            now = time.perf_counter()
            self.seconds[self.phase] = round(
                self.seconds.get(self.phase, 0.0) + now - self.started, 2
            )
            self.started = now
            self.phase = phase

    def stop(self) -> None:
        self.enter("end")
        self._stop.set()


async def _chunks(lines: list[bytes]) -> AsyncIterator[bytes]:
    for i in range(0, len(lines), 4096):
        yield b"\n".join(lines[i : i + 4096]) + b"\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--terms", type=int, default=10)
    parser.add_argument("--vocabulary", type=int, default=20_000)
    parser.add_argument(
        "--params",
        default="{}",
        help='further parameters, as JSON (e.g. \'{"guarantee": "paper"}\')',
    )
    args = parser.parse_args(argv)
    lines = wide_lines(args.lines, args.terms, args.vocabulary)
    corpus = asyncio.run(
        read_corpus(
            "text/plain",
            _chunks(lines),
            limit=1 << 40,
            limits=Limits(max_transactions=1 << 40, max_terms_per_release=1 << 40),
        )
    ).compact
    del lines
    gc.collect()
    phases = Phases()
    phases.enter("prepare")
    transactions, private, _ = publication_input(corpus, ["10001", "10002"], [], "casefold")
    del corpus
    gc.freeze()
    extra = json.loads(args.params)
    params = parse_params("sanony", {"r_th": 8, "cluster_size": 10, "seed": 1, **extra})
    phases.enter("validate")
    publication = pipeline.publish(
        "sanony", SeriesHistory(), transactions, private, params, phases.enter
    )
    phases.stop()
    terms = args.lines * args.terms
    out: dict[str, Any] = {
        "lines": args.lines,
        "terms": terms,
        "params": extra,
        "rows_published": sum(len(c.rows) for c in publication.release.clusters),
        "peak_mib": {k: round(v / 2**20) for k, v in phases.peaks.items()},
        "seconds": phases.seconds,
        "peak_bytes_per_term": round(max(phases.peaks.values()) / terms, 1),
        "growth_bytes_per_term": round(
            (max(phases.peaks.values()) - phases.peaks["start"]) / terms, 1
        ),
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

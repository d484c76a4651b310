"""Benchmark of the compute child's ``prepare`` phase: the core's transactions from an upload.

A FIMI upload of ``--size`` SeGen lines of BMS-WebView-2 (seed 2, release 1 of the end-to-end
benchmark's series) is parsed once into a ``CompactCorpus``; then
``CompactCorpus.transactions`` is timed ``--repeat`` times with the collector paused, as the
child runs it (``app.jobs.handoff.prepare``). CPU seconds, one JSON line on stdout.

    python benchmarks/prepare_phase.py --size 2000000 --repeat 3
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from app.core.segen import segen
    from app.io.compact import CorpusBuilder, Limits
    from app.io.corpora import BMS_WEBVIEW_2, corpus_file

    text = corpus_file(BMS_WEBVIEW_2).read_text()
    base = [line.strip() for line in text.splitlines() if line.strip()]
    lines = [base[p] for p in segen(len(base), args.size, 1, 0.4, seed=2)[0]]
    builder = CorpusBuilder(b"benchmark", Limits(args.size, 1_000, 200_000, 20 * args.size))
    if builder.add_lines(lines, 1, None) is not None:
        raise SystemExit("the corpus did not parse")
    corpus = builder.build()
    del lines, base
    gc.freeze()
    gc.disable()
    seconds = []
    for _ in range(args.repeat):
        started = time.process_time()
        transactions = corpus.transactions()
        seconds.append(round(time.process_time() - started, 3))
        del transactions
        gc.collect()
    print(
        json.dumps(
            {"size": args.size, "cpu_seconds": seconds, "median": statistics.median(seconds)}
        )
    )


if __name__ == "__main__":
    main()

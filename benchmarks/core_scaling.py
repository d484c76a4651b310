"""The core's phases against the release's size, as the compute child runs them (not a test).

One SeGen series of BMS-WebView-2 (the lines of ``benchmarks.e2e_publish``: rep 40%, 10% of
the terms private, sanony r_th 8, clusters of 10, the series' seed), each release published in
this process as the job's compute child does: the transactions built from the compact corpus
(one object per distinct line), the earlier releases unpacked from their packed bytes without
their cluster ledgers, the collector frozen over both, then ``pipeline.publish`` and the
release's risk summary (``assess_release``). Per release, a JSON line: the seconds and the peak
RSS of each phase (sampled every 20 ms, named by the core's progress reports), the CPU seconds,
and SHA-256 digests of the public release, its ledger, the report (without its timings) and the
risk summary (equal digests: byte-identical releases).

``--cache DIR`` keeps each release's packed bytes (and its digest) there, so that a later run
can publish only release ``--only K`` against the cached releases before it: alternated
before/after runs of one release without publishing the earlier ones again (valid while the
earlier releases' digests agree).

    python -m benchmarks.core_scaling --lines 1000000 --releases 3 --cache /tmp/core1m
    python -m benchmarks.core_scaling --lines 1000000 --releases 3 --cache /tmp/core1m --only 3
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.child_phases import Phases, _chunks

RESULTS = Path(__file__).resolve().parent / "results" / "core_scaling.jsonl"


def _sha(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def compact(lines: list[bytes]) -> Any:
    """The compact corpus of ``lines``, as the API stores an upload."""
    from app.services.ingest import Limits, read_corpus

    return asyncio.run(
        read_corpus(
            "text/plain",
            _chunks(lines),
            limit=1 << 40,
            limits=Limits(max_transactions=1 << 40, max_terms_per_release=1 << 40),
        )
    ).compact


def publish_one(
    box: list[Any], lines: int, private: list[str], packs: list[bytes], seed: int, r_th: float
) -> tuple[dict[str, Any], bytes]:
    """Release ``len(packs) + 1`` of the compact corpus in ``box`` (of ``lines`` lines)
    against the packed releases before it. The corpus is taken out of ``box`` so that it is
    freed once the transactions are built, as the compute child frees its payload."""
    corpus = box.pop()
    from app.core import pipeline
    from app.core.params import parse_params
    from app.core.risk.assess import assess_release
    from app.io.ledger import ledger_document
    from app.io.public import release_document
    from app.jobs.handoff import pack_release, share_rows, unpack_history
    from app.services.payload import publication_input

    gc.collect()
    phases = Phases()
    cpu = time.process_time()
    phases.enter("load")
    history = unpack_history(packs, b"", cluster_ledgers=False)
    phases.enter("prepare")
    transactions, private_terms, _ = publication_input(corpus, private, [], "casefold")
    del corpus
    gc.freeze()
    params = parse_params("sanony", {"r_th": r_th, "cluster_size": 10, "seed": seed})
    phases.enter("validate")
    publication = pipeline.publish(
        "sanony", history, transactions, private_terms, params, phases.enter
    )
    release = publication.release
    release.release_no = history.next_release_no
    if not release.private_terms:
        release.private_terms = private_terms
    phases.enter("risk")
    releases = [*history.releases, release]
    risk = assess_release(releases, len(releases) - 1, r_th, with_rows=False)
    phases.enter("pack")
    share_rows(release)
    packed = pack_release(release, publication.ledger)
    phases.stop()
    cpu = time.process_time() - cpu
    report = {k: v for k, v in publication.report.items() if k != "seconds"}
    terms = sum(len(t.terms) for t in transactions)
    record = {
        "release": len(packs) + 1,
        "lines": lines,
        "terms": terms,
        "rows": release.n_rows,
        "seconds": phases.seconds,
        "core_seconds": publication.report.get("seconds"),
        "cpu_seconds": round(cpu, 1),
        "peak_mib": {k: round(v / 2**20) for k, v in phases.peaks.items()},
        "peak_bytes_per_term": round(max(phases.peaks.values()) / terms, 1),
        "digest": {
            "public": _sha(release_document(release, "s", "sanony", {})),
            "ledger": _sha(ledger_document(release, publication.ledger)),
            "report": _sha(report),
            "risk": _sha(risk),
        },
    }
    return record, packed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--releases", type=int, default=3)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--r-th", type=float, default=8.0)
    parser.add_argument("--cache", type=Path, help="keep (and reuse) each release's packed bytes")
    parser.add_argument("--only", type=int, help="publish this release only (from --cache)")
    parser.add_argument("--label", default="")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    from benchmarks.e2e_publish import series_lines

    series, private = series_lines(args.lines, args.releases, args.seed)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    numbers = [args.only] if args.only else list(range(1, args.releases + 1))
    series = [lines if k in numbers else [] for k, lines in enumerate(series, 1)]
    packs: list[bytes] = []
    if args.only:
        packs = [(args.cache / f"release_{k}.pack").read_bytes() for k in range(1, args.only)]
    for number in numbers:
        # The lines are dropped once read: at 10,000,000 lines they would be a gigabyte of
        # this process' peak that the compute child never holds.
        lines, series[number - 1] = series[number - 1], []
        box = [compact(lines)]
        count = len(lines)
        del lines
        record, packed = publish_one(box, count, private, packs, args.seed, args.r_th)
        record.update(
            label=args.label, commit=commit, seed=args.seed, load1=round(os.getloadavg()[0], 2)
        )
        if args.cache is not None:
            args.cache.mkdir(parents=True, exist_ok=True)
            cached = args.cache / f"release_{number}.json"
            if cached.exists():
                record["same_as_cache"] = json.loads(cached.read_text()) == record["digest"]
            elif not args.only:
                (args.cache / f"release_{number}.pack").write_bytes(packed)
                cached.write_text(json.dumps(record["digest"]))
        packs.append(packed)
        line = json.dumps(record)
        print(line, flush=True)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("a") as sink:
            sink.write(line + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

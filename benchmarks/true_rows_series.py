"""One SeGen series at the ``true_rows`` guarantee, release by release, with what each term
published: refusals, suppressed copies and CPU seconds (docs/lab/long-series-true-rows.md).

SeGen (``--rep``, 40%) of BMS-WebView-1 or -2 with ``--seed``, 10% of the terms private (seeded with
``--private-seed``, default ``--seed``); a release size above the corpus repeats its lines
(a line then stands for several individuals with the same record, as in
``benchmarks/e2e_publish.py``'s upsampled series). Sanony with ``r_th`` and the publisher
seed 1, every other parameter at its default unless ``--params`` sets it. Published in this
process with :func:`app.core.pipeline.publish`; a refused release is recorded and left out,
and the next snapshot is tried as the next release (the service stores nothing of a
refusal). One JSON line a release to ``--out``: CPU and wall seconds, the load average, the
report's ``private_copies`` and escalation steps, and with ``--terms`` every private term's
true and published counts.

    python -m benchmarks.true_rows_series --corpus 1 --seed 1 --out b1.jsonl
    python -m benchmarks.true_rows_series --corpus 2 --seed 2 --private-seed 1 --out b2.jsonl
    python -m benchmarks.true_rows_series --size 1000000 --releases 6 --out upsampled.jsonl
    python -m benchmarks.true_rows_series --summary b1.jsonl b2.jsonl upsampled.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from app.io.corpora import BMS_WEBVIEW_1, BMS_WEBVIEW_2, corpus_file

CORPORA = {1: BMS_WEBVIEW_1, 2: BMS_WEBVIEW_2}


def run(args: argparse.Namespace) -> None:
    from app.core.errors import PublicationFailed
    from app.core.history import SeriesHistory
    from app.core.model import Transaction
    from app.core.params import parse_params
    from app.core.pipeline import publish
    from app.core.segen import choose_private_terms, segen
    from app.io.corpus import read_corpus

    corpus = read_corpus(corpus_file(CORPORA[args.corpus]))
    private_seed = args.seed if args.private_seed is None else args.private_seed
    private = choose_private_terms([t for tr in corpus for t in tr.terms], 0.1, seed=private_seed)
    params = parse_params("sanony", {"r_th": args.r_th, "seed": 1, **json.loads(args.params)})
    history = SeriesHistory()
    positions = segen(len(corpus), args.size, args.releases, args.rep, seed=args.seed)
    for number, release in enumerate(positions, 1):
        snapshot = [Transaction(corpus[p].terms, f"p{i}") for i, p in enumerate(release)]
        true = Counter(t for tr in snapshot for t in tr.terms if t in private)
        started, cpu = time.perf_counter(), time.process_time()
        record: dict[str, Any] = {"release": number, "load": _load()}
        try:
            publication = publish("sanony", history, snapshot, private, params)
        except PublicationFailed as failed:
            record["refused"] = failed.message
            record["details"] = {
                k: failed.details.get(k) for k in ("terms", "smallest_r_th", "worst_by_term")
            }
            published: dict[str, int] = {}
        else:
            history.add(publication.release, publication.ledger)
            report = publication.report
            record["private_copies"] = report["private_copies"]
            steps = report.get("escalation", {}).get("steps", [])
            record["escalation"] = [step["step"] for step in steps]
            published = dict(publication.release.term_totals())
        record["cpu_seconds"] = round(time.process_time() - cpu, 3)
        record["wall_seconds"] = round(time.perf_counter() - started, 3)
        record["published_releases"] = len(history.releases)
        if args.terms:
            record["terms"] = {s: [true[s], published.get(s, 0)] for s in sorted(true)}
        line = json.dumps(record)
        with args.out.open("a") as out:
            out.write(line + "\n")
        brief = {k: v for k, v in record.items() if k not in ("terms", "details")}
        print(json.dumps(brief), file=sys.stderr, flush=True)


def _load() -> float | None:
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except OSError:
        return None


def summary(path: Path) -> dict[str, Any]:
    """Refused and decoupled releases; the share of the true private copies not published
    over the published releases (their ``private_copies``), and over every snapshot (a
    refused release's copies all unpublished, which needs ``--terms``); the CPU of the last
    release over release 2's; the median wall seconds a release and the load average."""
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    done = [r for r in records if "refused" not in r]
    true = sum(r["private_copies"]["true"] for r in done)
    published = sum(r["private_copies"]["published"] for r in done)
    every = sum(t for r in records for t, _ in r.get("terms", {}).values())
    cpu = {r["release"]: r["cpu_seconds"] for r in records}
    last = max(cpu)
    return {
        "file": path.name,
        "releases": len(records),
        "refused": [r["release"] for r in records if "refused" in r],
        "decoupled": [r["release"] for r in done if "decoupling" in r.get("escalation", [])],
        "suppressed_share": round(1 - published / true, 4) if true else None,
        "unpublished_share_every_snapshot": round(1 - published / every, 4) if every else None,
        "cpu_ratio_last_2": round(cpu[last] / cpu[2], 2) if cpu.get(2) else None,
        "median_wall_seconds": sorted(r["wall_seconds"] for r in records)[len(records) // 2],
        "load": [min(r["load"] for r in records), max(r["load"] for r in records)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=int, choices=(1, 2), default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--private-seed", type=int, help="seeds the private terms apart (default: --seed)"
    )
    parser.add_argument("--size", type=int, default=20_000)
    parser.add_argument("--releases", type=int, default=20)
    parser.add_argument("--rep", type=float, default=0.4, help="SeGen's share kept")
    parser.add_argument("--r-th", type=float, default=8.0)
    parser.add_argument("--params", default="{}", help="JSON of further Sanony parameters")
    parser.add_argument("--terms", action="store_true", help="keep every term's counts")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--summary", type=Path, nargs="+")
    args = parser.parse_args()
    if args.summary:
        for path in args.summary:
            print(json.dumps(summary(path)))
        return
    if args.out is None:
        parser.error("--out is required to run a series")
    run(args)


if __name__ == "__main__":
    main()

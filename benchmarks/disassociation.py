"""Benchmark of disassociation as a method (design.md §11): time, memory and ``tlost`` per strategy.

On the published halves of the corpora of :mod:`benchmarks.attack_data` (LEE and WIKI from the
gensim wheel, B1 BMS-WebView-1 when ``SERIALPUB_CORPORA_DIR`` has it), the first ``--limit``
records, ``k`` 5, ``m`` 2, ``max_cluster_size`` 25, each run in its own process so that its
peak memory (ru_maxrss) is its own.

    python benchmarks/disassociation.py                    # table on stdout
    python benchmarks/disassociation.py --corpora LEE --strategies adding --json out.json
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

from app.io.corpora import BMS_WEBVIEW_1, corpora_dir, find_corpus

DATA = corpora_dir()
STRATEGIES = ("suppression", "adding", "remaining_list")


def run_one(corpus: str, strategy: str, limit: int, k: int, m: int) -> dict[str, object]:
    from app.core.disassociation import DisassociationParams
    from app.core.disassociation.publish import publish_disassociation
    from app.core.history import SeriesHistory
    from benchmarks.attack_data import load

    records = load(corpus, DATA).published[:limit]
    params = DisassociationParams(k=k, m=m, strategy=strategy)  # type: ignore[arg-type]
    started = time.perf_counter()
    report = publish_disassociation(SeriesHistory(), records, frozenset(), params).report
    return {
        "corpus": corpus,
        "strategy": strategy,
        "records": len(records),
        "k": k,
        "m": m,
        "seconds": round(time.perf_counter() - started, 2),
        "peak_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        **{
            key: report[key]
            for key in ("clusters", "joint_clusters", "suppressed_records", "tlost")
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", nargs="+", default=["LEE", "WIKI", "B1"])
    parser.add_argument("--strategies", nargs="+", default=list(STRATEGIES))
    parser.add_argument("--limit", type=int, default=5000)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--m", type=int, default=2)
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)  # child: corpus strategy
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(*args.one, args.limit, args.k, args.m)))
        return
    results = []
    for corpus in args.corpora:
        if corpus == "B1" and find_corpus(BMS_WEBVIEW_1) is None:
            continue
        for strategy in args.strategies:
            out = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "benchmarks.disassociation",
                    "--one",
                    corpus,
                    strategy,
                    "--limit",
                    str(args.limit),
                    "--k",
                    str(args.k),
                    "--m",
                    str(args.m),
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            result = json.loads(out.stdout)
            results.append(result)
            print(" | ".join(str(v) for v in result.values()), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()

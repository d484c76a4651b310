"""Benchmark of the core: Sanony on SeGen series of BMS-WebView-2 (issue: core engine).

Five releases per size, rep 40%, r_th 8, 10% of the terms private; sizes 10k, 20k, 40k and
80k transactions. Each size runs in its own process so that its peak memory (ru_maxrss) is
its own. Reports per size: the median publish time of a release, the time of the last
release (published against 4 earlier ones), peak memory and the counterfeit rate.

    python benchmarks/core_publish.py                      # all sizes, table on stdout
    python benchmarks/core_publish.py --sizes 10000 --json out.json
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from app.io.corpora import BMS_WEBVIEW_2, corpus_file

DATA = corpus_file(BMS_WEBVIEW_2)


def run_one(
    size: int, releases: int, rep: float, r_th: float, cluster_size: int, data: Path
) -> dict:
    from app.core.history import SeriesHistory
    from app.core.model import Transaction
    from app.core.params import parse_params
    from app.core.pipeline import publish
    from app.core.segen import choose_private_terms, segen
    from app.io.corpus import read_corpus

    corpus = read_corpus(data)
    private = choose_private_terms([t for tr in corpus for t in tr.terms], 0.1, seed=1)
    params = parse_params("sanony", {"r_th": r_th, "cluster_size": cluster_size, "seed": 1})
    history = SeriesHistory()
    times: list[float] = []
    counterfeits = rows = 0
    phases: list[dict[str, float]] = []
    for positions in segen(len(corpus), size, releases, rep, seed=1):
        snapshot = [Transaction(corpus[p].terms, f"p{p}") for p in positions]
        started = time.perf_counter()
        publication = publish("sanony", history, snapshot, private, params)
        times.append(time.perf_counter() - started)
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
        counterfeits += int(publication.report["counterfeits"])  # type: ignore[call-overload]
        rows += publication.release.n_rows
        phases.append(dict(publication.report["seconds"]))  # type: ignore[call-overload]
    return {
        "size": size,
        "releases": releases,
        "publish_seconds": [round(t, 3) for t in times],
        "median_seconds": round(statistics.median(times), 3),
        "last_release_seconds": round(times[-1], 3),
        "last_release_phases": phases[-1],
        "phases": phases,
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "counterfeit_rate": round(counterfeits / rows, 5),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 20_000, 40_000, 80_000])
    parser.add_argument("--releases", type=int, default=5)
    parser.add_argument("--rep", type=float, default=0.4)
    parser.add_argument("--r-th", type=float, default=8.0)
    parser.add_argument("--cluster-size", type=int, default=10)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.data.exists():
        sys.exit(f"benchmark corpus not found: {args.data}")
    if args.one:
        print(
            json.dumps(
                run_one(
                    args.sizes[0], args.releases, args.rep, args.r_th, args.cluster_size, args.data
                )
            )
        )
        return
    results = []
    for size in args.sizes:
        command = [
            sys.executable,
            __file__,
            "--one",
            "--sizes",
            str(size),
            "--releases",
            str(args.releases),
            "--rep",
            str(args.rep),
            "--r-th",
            str(args.r_th),
            "--cluster-size",
            str(args.cluster_size),
            "--data",
            str(args.data),
        ]
        output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        results.append(json.loads(output.strip().splitlines()[-1]))
        print(f"size {size}: {results[-1]}", file=sys.stderr, flush=True)
    print(
        "| release size | median publish (s) | last release vs 4 earlier (s) "
        "| peak RSS (MiB) | counterfeit rate |"
    )
    print("|---:|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r['size']:,} | {r['median_seconds']} | {r['last_release_seconds']} | "
            f"{r['peak_rss_mib']} | {r['counterfeit_rate']:.2%} |"
        )
    if len(results) > 1:
        by_size = {r["size"]: r for r in results}
        if 80_000 in by_size and 20_000 in by_size:
            ratio = by_size[80_000]["median_seconds"] / by_size[20_000]["median_seconds"]
            print(f"\n80k / 20k median time ratio: {ratio:.2f}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

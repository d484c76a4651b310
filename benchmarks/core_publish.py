"""Benchmark of the core: Sanony on SeGen series of BMS-WebView-2.

Five releases per size, rep 40%, r_th 8, 10% of the terms private; sizes 10k, 20k, 40k and
80k transactions. Each size runs in its own process so that its peak memory (ru_maxrss) is
its own. Reports per size: the median publish time of a release, the time of the last
release (published against 4 earlier ones), peak memory and the counterfeit rate.

    python benchmarks/core_publish.py                      # all sizes, table on stdout
    python benchmarks/core_publish.py --sizes 10000 --json out.json
    python benchmarks/core_publish.py --repeat 3             # each size 3 times, medians

``--repeat N`` runs each size N times, one fresh process each, and reports per size the median
of the runs' median publish, last release and peak memory with their range (a
figure is a median over several runs; the machine is shared).

A refused release (``PublicationFailed``) is recorded with its number and reason and the series
goes on without it, as the service would (nothing stored).

One large release (``--lines N``): N lines of the corpus repeated, one release at the
defaults, its peak RSS and bytes per term occurrence (what the upload caps are sized by):

    python benchmarks/core_publish.py --lines 1000000 --json benchmarks/results/release_1m.json

Series length: one series of ``--releases`` releases of the first size, in
this process, one JSON line per release appended to ``--out`` (default
``benchmarks/results/series_length.jsonl``): publish seconds (wall and CPU), seconds per
phase, repair rounds, peak RSS (``ru_maxrss``) and current RSS (``/proc/self/statm``) after
the release.

    python benchmarks/core_publish.py --series --sizes 20000 --releases 20 --label after
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from app.core.model import Publication, PublishedRelease
from app.io.corpora import BMS_WEBVIEW_2, corpus_file

DATA = corpus_file(BMS_WEBVIEW_2)
RESULTS = Path(__file__).resolve().parent / "results"


def peak_rss_mib() -> float:
    """Peak resident memory of this process so far (``ru_maxrss``, KiB on Linux)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def current_rss_mib() -> float | None:
    """Resident memory now (``/proc/self/statm``, in pages), or ``None`` off Linux."""
    try:
        resident = int(Path("/proc/self/statm").read_text().split()[1])
    except OSError:
        return None
    return round(resident * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)


def series(
    size: int, releases: int, rep: float, r_th: float, cluster_size: int, data: Path
) -> Iterator[dict]:
    """Publish one SeGen series release after release; one record per release. A refused
    release is recorded with its reason and left out of the history (nothing stored)."""
    from app.core.errors import PublicationFailed
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
    reading = Reading()
    for number, positions in enumerate(segen(len(corpus), size, releases, rep, seed=1), 1):
        snapshot = [Transaction(corpus[p].terms, f"p{p}") for p in positions]
        started, cpu = time.perf_counter(), time.process_time()
        try:
            publication = publish("sanony", history, snapshot, private, params)
        except PublicationFailed as failed:
            yield {
                "release": number,
                "published": len(history.releases),
                "refused": failed.message,
                "publish_seconds": round(time.perf_counter() - started, 3),
                "cpu_seconds": round(time.process_time() - cpu, 3),
                "peak_rss_mib": peak_rss_mib(),
                "rss_mib": current_rss_mib(),
            }
            continue
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        history.add(publication.release, publication.ledger)
        report = publication.report
        peak = peak_rss_mib()
        yield {
            "release": number,
            "published": len(history.releases),
            "publish_seconds": round(seconds, 3),
            # CPU seconds of this process: less moved than wall time on a shared machine.
            "cpu_seconds": round(cpu, 3),
            # Counted after the clock stopped (and after the peak was read).
            **reading.add(history.releases),
            "digest": digest(publication),
            "phases": dict(report["seconds"]),  # type: ignore[call-overload]
            "repair_rounds": report.get("repair_rounds"),
            "rows": publication.release.n_rows,
            "counterfeits": int(report["counterfeits"]),  # type: ignore[call-overload]
            "peak_rss_mib": peak,
            "rss_mib": current_rss_mib(),
        }


class Reading:
    """What the adversary of design.md §4 reads at release k, counted from the public
    releases: the pairs of whole releases whose overlap ``N(O)`` is not empty (the global
    composition's overlaps, formula 12 multiplies one factor per such pair a row lies in or
    out of), and the row patterns (each distinct row of each release has one, its z code in
    each overlap with every other release) with their codes (patterns x (k - 1)). The
    publication's CPU seconds over these units is its cost per unit read. Counted after the
    clock stopped, from the published releases, keeping only counts (the series' peak memory
    is not the benchmark's)."""

    def __init__(self) -> None:
        self.distinct: list[int] = []
        self.overlaps = 0

    def add(self, releases: Sequence[PublishedRelease]) -> dict[str, int]:
        """Count the newest of ``releases`` in."""
        new = {row for cluster in releases[-1].clusters for row in cluster.rows}
        self.overlaps += sum(
            1
            for release in releases[:-1]
            if any(row in new for cluster in release.clusters for row in cluster.rows)
        )
        self.distinct.append(len(new))
        patterns = sum(self.distinct)
        return {
            "overlaps": self.overlaps,
            "row_patterns": patterns,
            "pattern_codes": patterns * (len(self.distinct) - 1),
        }


def digest(publication: Publication) -> str:
    """SHA-256 of the release's public document and its ledger, canonical JSON: equal digests
    are byte-identical releases (an optimisation must leave them so for a given seed)."""
    from app.io.ledger import ledger_document
    from app.io.public import release_document

    document = {
        "public": release_document(publication.release, "s", "sanony", {}),
        "ledger": ledger_document(publication.release, publication.ledger),
    }
    return hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()


def one_large_release(lines: int, r_th: float, data: Path) -> dict:
    """One release of ``lines`` lines (the corpus repeated from its start) published at the
    defaults (only ``r_th`` given, a fixed seed), as the compute child publishes it: peak RSS
    (``ru_maxrss``) after the corpus is read and after the publication, and per term
    occurrence of the release the bytes of the whole peak and of the publication's own rise."""
    from app.core.history import SeriesHistory
    from app.core.model import Transaction
    from app.core.params import parse_params
    from app.core.pipeline import publish
    from app.core.segen import choose_private_terms
    from app.io.corpus import read_corpus

    corpus = read_corpus(data)
    private = choose_private_terms([t for tr in corpus for t in tr.terms], 0.1, seed=1)
    snapshot = [Transaction(corpus[i % len(corpus)].terms, f"p{i}") for i in range(lines)]
    del corpus
    terms = sum(len(t.terms) for t in snapshot)
    params = parse_params("sanony", {"r_th": r_th, "seed": 1})
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    started, cpu = time.perf_counter(), time.process_time()
    publication = publish("sanony", SeriesHistory(), snapshot, private, params)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {
        "lines": lines,
        "terms": terms,
        "rows": publication.release.n_rows,
        "publish_seconds": round(seconds, 1),
        "cpu_seconds": round(cpu, 1),
        "phases": dict(publication.report["seconds"]),  # type: ignore[call-overload]
        "rss_before_publish_mib": round(before / 2**20, 1),
        "peak_rss_mib": round(peak / 2**20, 1),
        "bytes_per_term": round(peak / terms),
        "publish_bytes_per_term": round((peak - before) / terms),
    }


def run_one(
    size: int, releases: int, rep: float, r_th: float, cluster_size: int, data: Path
) -> dict:
    records = list(series(size, releases, rep, r_th, cluster_size, data))
    done = [r for r in records if "refused" not in r]
    times = [r["publish_seconds"] for r in done]
    rows = sum(r["rows"] for r in done)
    return {
        "size": size,
        "releases": releases,
        "publish_seconds": times,
        "median_seconds": round(statistics.median(times), 3) if times else None,
        "last_release_seconds": times[-1] if times else None,
        "last_release_phases": done[-1]["phases"] if done else None,
        "phases": [r["phases"] for r in done],
        "refused": [
            {"release": r["release"], "reason": r["refused"]} for r in records if "refused" in r
        ],
        "peak_rss_mib": peak_rss_mib(),
        "counterfeit_rate": round(sum(r["counterfeits"] for r in done) / rows, 5) if rows else None,
    }


#: Figures of a size's run whose median over repeated runs is reported.
_REPEATED = ("median_seconds", "last_release_seconds", "peak_rss_mib")


def median_of(runs: list[dict], figures: tuple[str, ...] = _REPEATED) -> dict:
    """One size's repeated runs as one result: the median of each of ``figures`` and its
    ``[min, max]`` under ``<figure>_range`` (a run without the figure left out); the rest
    (counterfeit rate, refusals: the same seed gives the same releases) from the first run.

    >>> runs = [{"median_seconds": s, "last_release_seconds": 2 * s, "peak_rss_mib": 9.0}
    ...         for s in (3.0, 1.0, 2.0)]
    >>> joined = median_of(runs)
    >>> joined["median_seconds"], joined["median_seconds_range"], joined["runs"]
    (2.0, [1.0, 3.0], 3)
    """
    joined = dict(runs[0])
    for key in figures:
        values = [r[key] for r in runs if r.get(key) is not None]
        joined[key] = round(statistics.median(values), 3) if values else None
        joined[f"{key}_range"] = [min(values), max(values)] if values else None
    joined["runs"] = len(runs)
    return joined


def run_series(args: argparse.Namespace) -> None:
    """One series in this process, a JSON line per release appended to ``args.out``."""
    args.out.parent.mkdir(parents=True, exist_ok=True)
    run = {
        "label": args.label,
        "size": args.sizes[0],
        "releases": args.releases,
        "rep": args.rep,
        "r_th": args.r_th,
    }
    for record in series(
        args.sizes[0], args.releases, args.rep, args.r_th, args.cluster_size, args.data
    ):
        line = json.dumps({**run, **record})
        with args.out.open("a") as out:
            out.write(line + "\n")
        print(line, file=sys.stderr, flush=True)


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
    parser.add_argument(
        "--series", action="store_true", help="one series of --releases, a JSON line per release"
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "series_length.jsonl")
    parser.add_argument("--label", default="", help="names the run in --series' lines")
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs per size; the table gives their medians"
    )
    parser.add_argument(
        "--lines", type=int, help="one release of this many lines (the corpus repeated)"
    )
    args = parser.parse_args()
    if not args.data.exists():
        sys.exit(f"benchmark corpus not found: {args.data}")
    if args.lines:
        result = one_large_release(args.lines, args.r_th, args.data)
        print(json.dumps(result))
        if args.json:
            args.json.write_text(json.dumps(result, indent=1) + "\n")
        return
    if args.series:
        run_series(args)
        return
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
        runs = []
        for _ in range(max(args.repeat, 1)):
            output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
            runs.append(json.loads(output.strip().splitlines()[-1]))
            print(f"size {size}: {runs[-1]}", file=sys.stderr, flush=True)
        results.append(median_of(runs))
    print(
        f"Medians of {max(args.repeat, 1)} run(s) per size, [min, max] in brackets.\n\n"
        "| release size | median publish (s) | last release vs 4 earlier (s) "
        "| peak RSS (MiB) | counterfeit rate |"
    )
    print("|---:|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r['size']:,} | {r['median_seconds']} {r['median_seconds_range']} "
            f"| {r['last_release_seconds']} {r['last_release_seconds_range']} "
            f"| {r['peak_rss_mib']} | {r['counterfeit_rate']:.2%} |"
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

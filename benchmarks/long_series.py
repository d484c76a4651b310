"""The long series at the default guarantee: 20 releases of 20,000 BMS-WebView-2 rows.

SeGen (rep 40%, seed 1), 10% of the terms private, Sanony with only ``r_th`` given (8): the
default guarantee, ``true_rows`` (design.md §5.8), and every other parameter at its default.
Two runs, each in its own process so that its peak memory (``ru_maxrss``) is its own:

- the series of ``--releases`` (20) releases, release by release
  (``benchmarks/core_publish.py --series``): per release CPU and wall seconds, seconds per
  phase, peak and current RSS, what the adversary reads (overlaps of whole releases, row
  patterns and their codes: :class:`benchmarks.core_publish.Reading`) and a digest of the
  release (public document and ledger) to check that an optimisation leaves it byte-identical;
- the first two releases alone, the baseline of peak memory.

The summary: CPU of releases 2, 5, 10, 15 and 20, the ratio of release 20's CPU to release
2's, the peak RSS of the long run over the two-release run's, and the CPU microseconds per
row pattern and per overlap read at releases 2 and 20. Every run is kept under its
``--label`` in ``benchmarks/results/long_series.json``.

    python -m benchmarks.long_series --label after
    python -m benchmarks.long_series --compare before after   # digests equal, release by release
    python -m benchmarks.long_series --table before after     # markdown, release by release
    python -m benchmarks.long_series --summarise after        # a kept run's summary again
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "long_series.json"
#: Releases whose CPU the summary quotes.
QUOTED = (2, 5, 10, 15, 20)


def run(releases: int, size: int, r_th: float) -> list[dict[str, Any]]:
    """One series in a fresh process, its records in release order."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "series.jsonl"
        command = [
            sys.executable,
            str(ROOT / "benchmarks" / "core_publish.py"),
            "--series",
            "--sizes",
            str(size),
            "--releases",
            str(releases),
            "--r-th",
            str(r_th),
            "--out",
            str(out),
        ]
        subprocess.run(command, check=True, cwd=ROOT)
        return [json.loads(line) for line in out.read_text().splitlines() if line.strip()]


def summary(long: list[dict[str, Any]], short: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures the long series is judged by (see the module docstring).

    >>> rec = lambda n, cpu, peak: {"release": n, "cpu_seconds": cpu, "peak_rss_mib": peak,
    ...     "row_patterns": 10 * n, "overlaps": n - 1}
    >>> s = summary([rec(2, 1.0, 100.0), rec(20, 3.0, 150.0)], [rec(2, 1.0, 100.0)])
    >>> s["cpu_ratio_20_2"], s["peak_rss_ratio"], s["us_per_row_pattern"]
    (3.0, 1.5, {'2': 50000.0, '20': 15000.0})
    """
    by_no = {r["release"]: r for r in long}
    last = max(by_no)
    # The unit cost of the last release published (a refused one published nothing to read).
    read = max(n for n, r in by_no.items() if "refused" not in r)
    cpu = {str(n): by_no[n].get("cpu_seconds") for n in QUOTED if n in by_no}
    first, final = by_no.get(2, {}).get("cpu_seconds"), by_no[last].get("cpu_seconds")

    def per_unit(unit: str) -> dict[str, float | None]:
        return {
            str(n): round(1e6 * by_no[n]["cpu_seconds"] / by_no[n][unit], 2)
            if by_no[n].get("cpu_seconds") is not None and by_no[n].get(unit)
            else None
            for n in (2, read)
            if n in by_no
        }

    peak = max(r["peak_rss_mib"] for r in long)
    baseline = max(r["peak_rss_mib"] for r in short)
    return {
        "releases": len(long),
        "refused": [r["release"] for r in long if "refused" in r],
        "cpu_seconds": cpu,
        "cpu_ratio_20_2": round(final / first, 2) if first and final else None,
        "peak_rss_mib": peak,
        "two_release_peak_rss_mib": baseline,
        "peak_rss_ratio": round(peak / baseline, 2),
        "us_per_row_pattern": per_unit("row_patterns"),
        "us_per_overlap": per_unit("overlaps"),
        "unit_cost": unit_cost(long),
    }


def unit_cost(long: list[dict[str, Any]]) -> dict[str, Any] | None:
    """CPU seconds of releases 2 to the last as a fixed cost plus a cost per row pattern read.

    A release costs what its own rows cost (Anony, the totals: about the same every release of
    one size) plus what the adversary's reading of the whole series costs, which grows with
    the row patterns of every published release. The least-squares line
    ``cpu = fixed + unit × patterns`` over the published releases from 2 on separates the two;
    ``marginal`` is each quoted release's ``(cpu - fixed) / patterns``, flat when the reading
    is all that grows.

    >>> recs = [{"release": n, "cpu_seconds": 0.5 + 2e-5 * 1000 * n, "row_patterns": 1000 * n}
    ...         for n in range(1, 21)]
    >>> u = unit_cost(recs)
    >>> u["fixed_seconds"], u["us_per_row_pattern"], u["r2"], u["marginal"]["20"]
    (0.5, 20.0, 1.0, 20.0)
    """
    points = [
        (r["row_patterns"], r["cpu_seconds"])
        for r in long
        if r["release"] >= 2 and "refused" not in r and r.get("cpu_seconds") is not None
    ]
    if len(points) < 3:
        return None
    xs, ys = zip(*points, strict=True)
    slope, fixed = statistics.linear_regression(xs, ys)
    r2 = statistics.correlation(xs, ys) ** 2
    by_no = {r["release"]: r for r in long if "refused" not in r}
    marginal = {
        str(n): round(1e6 * (by_no[n]["cpu_seconds"] - fixed) / by_no[n]["row_patterns"], 1)
        for n in QUOTED
        if n in by_no and by_no[n].get("row_patterns")
    }
    spread = [1e6 * (y - fixed) / x for x, y in points]
    return {
        "fixed_seconds": round(fixed, 3),
        "us_per_row_pattern": round(1e6 * slope, 2),
        "r2": round(r2, 3),
        "marginal": marginal,
        "marginal_range": [round(min(spread), 1), round(max(spread), 1)],
    }


def compare(results: dict[str, Any], before: str, after: str) -> list[int]:
    """Releases whose digests differ between two labelled runs (a refusal on one side only
    counts as differing)."""
    a = {r["release"]: (r.get("digest"), r.get("refused")) for r in results[before]["series"]}
    b = {r["release"]: (r.get("digest"), r.get("refused")) for r in results[after]["series"]}
    return [n for n in sorted(set(a) | set(b)) if a.get(n) != b.get(n)]


def table(results: dict[str, Any], before: str, after: str) -> str:
    """Markdown, release by release: CPU and peak RSS of two labelled runs, what the
    adversary reads at the release, and the after run's CPU microseconds per row pattern."""
    a = {r["release"]: r for r in results[before]["series"]}
    b = {r["release"]: r for r in results[after]["series"]}
    lines = [
        "| release | CPU s before | CPU s after | peak RSS MiB before / after | overlaps "
        "| row patterns | µs per row pattern after | same release |",
        "|---:|---:|---:|---:|---:|---:|---:|:---|",
    ]
    for n in sorted(b):
        x, y = a.get(n, {}), b[n]
        same = (x.get("digest"), x.get("refused")) == (y.get("digest"), y.get("refused"))
        unit = f"{1e6 * y['cpu_seconds'] / y['row_patterns']:.1f}" if y.get("row_patterns") else ""
        lines.append(
            f"| {n}{' (refused)' if 'refused' in y else ''} | {x.get('cpu_seconds', '')} "
            f"| {y.get('cpu_seconds', '')} | {x.get('peak_rss_mib', '')} / {y['peak_rss_mib']} "
            f"| {y.get('overlaps', '')} | {y.get('row_patterns', '')} | {unit} "
            f"| {'yes' if same else 'NO'} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--label", default="run")
    parser.add_argument("--releases", type=int, default=20)
    parser.add_argument("--size", type=int, default=20_000)
    parser.add_argument("--r-th", type=float, default=8.0)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--table", nargs=2, metavar=("BEFORE", "AFTER"))
    parser.add_argument(
        "--summarise", metavar="LABEL", help="recompute a kept run's summary from its records"
    )
    args = parser.parse_args()
    results: dict[str, Any] = json.loads(args.out.read_text()) if args.out.exists() else {}
    if args.summarise:
        kept = results[args.summarise]
        kept["summary"] = summary(kept["series"], kept["two_releases"])
        args.out.write_text(json.dumps(results, indent=1) + "\n")
        print(json.dumps(kept["summary"], indent=1))
        return
    if args.table:
        print(table(results, *args.table))
        return
    if args.compare:
        differing = compare(results, *args.compare)
        print("identical" if not differing else f"releases differing: {differing}")
        sys.exit(1 if differing else 0)
    long = run(args.releases, args.size, args.r_th)
    short = run(2, args.size, args.r_th)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()
    results[args.label] = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit,
        "size": args.size,
        "r_th": args.r_th,
        "summary": summary(long, short),
        "series": long,
        "two_releases": short,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps(results[args.label]["summary"], indent=1))


if __name__ == "__main__":
    main()

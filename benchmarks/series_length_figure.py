"""The figure of a long series: publish time and memory against release number.

Reads the JSON lines that ``benchmarks/core_publish.py --series`` appends (one per release,
tagged with ``label`` and ``size``) and draws, per (label, size) run, the seconds each release
took to publish (the phases stacked for the last run named, lines for the others) and the
resident memory after each release. Refused releases are marked with a cross.

    python -m benchmarks.series_length_figure [--results benchmarks/results/series_length.jsonl]
        [--out docs/figures/series_length.png] [--labels before after] [--log] [--cpu]
        [--median]

``--median``: runs repeated under labels that differ only in a trailing `` runN`` (``after
run1``, ``after run2``, ...) are drawn as one, per release the median of each figure over the
runs that published it (:func:`median_runs`); the summary says over how many.

Needs matplotlib (``pip install -e '.[bench]'``).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchmarks.core_publish import median_of

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "series_length.jsonl"
FIGURE = ROOT / "docs" / "figures" / "series_length.png"
#: The core's phases in the order they run (``publication.report["seconds"]``).
PHASES = ("anony", "bp", "fp1", "fp2", "verify")

Run = tuple[str, int]


def load(path: Path, labels: list[str] | None = None) -> dict[Run, list[dict[str, Any]]]:
    """Records per (label, size), in release order; the last record of a release wins (a run
    repeated under the same label replaces the earlier one)."""
    runs: dict[Run, dict[int, dict[str, Any]]] = defaultdict(dict)
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        key = (str(record.get("label", "")), int(record["size"]))
        if labels is None or key[0] in labels:
            runs[key][int(record["release"])] = record
    order = labels or sorted({label for label, _ in runs})
    return {
        key: [records[n] for n in sorted(records)]
        for key, records in sorted(
            runs.items(), key=lambda item: (order.index(item[0][0]), item[0][1])
        )
    }


def use_cpu_seconds(runs: dict[Run, list[dict[str, Any]]]) -> None:
    """Read ``cpu_seconds`` as the publish seconds (a loaded machine inflates wall time
    more than CPU time); a record without it keeps its wall seconds."""
    for records in runs.values():
        for record in records:
            if record.get("cpu_seconds") is not None:
                record["publish_seconds"] = record["cpu_seconds"]


_REPEAT = re.compile(r"\s+run\d+$")
#: Figures of a release whose median is taken over repeated runs.
_MEDIAN_OF = ("publish_seconds", "cpu_seconds", "peak_rss_mib", "rss_mib", "repair_rounds")


def median_runs(runs: dict[Run, list[dict[str, Any]]]) -> dict[Run, list[dict[str, Any]]]:
    """Runs whose labels differ only in a trailing `` runN`` joined into one labelled
    ``"<label> (median of K)"``: per release, the median of each figure and of each phase's
    seconds over the runs that published it; a release refused in every run stays refused.

    >>> one = {"release": 1, "publish_seconds": 1.0, "peak_rss_mib": 10.0, "phases": {"bp": 1}}
    >>> two = {**one, "publish_seconds": 3.0, "phases": {"bp": 3}}
    >>> joined = median_runs({("a run1", 5): [one], ("a run2", 5): [two]})
    >>> list(joined), joined[("a (median of 2)", 5)][0]["publish_seconds"]
    ([('a (median of 2)', 5)], 2.0)
    """
    groups: dict[Run, list[list[dict[str, Any]]]] = defaultdict(list)
    for (label, size), records in runs.items():
        groups[(_REPEAT.sub("", label), size)].append(records)
    joined: dict[Run, list[dict[str, Any]]] = {}
    for (label, size), repeats in groups.items():
        by_no: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for records in repeats:
            for record in records:
                by_no[int(record["release"])].append(record)
        name = label if len(repeats) == 1 else f"{label} (median of {len(repeats)})"
        joined[(name, size)] = [_median_record(by_no[n]) for n in sorted(by_no)]
    return joined


def _median_record(records: list[dict[str, Any]]) -> dict[str, Any]:
    done = [r for r in records if "refused" not in r]
    if not done:
        return records[-1]
    # The same join as core_publish's sizes, from the last run (its phases' keys).
    merged = median_of(done[::-1], _MEDIAN_OF)
    phases = {p for r in done for p in r.get("phases", {})}
    merged["phases"] = {
        p: statistics.median(float(r.get("phases", {}).get(p, 0.0)) for r in done)
        for p in sorted(phases)
    }
    return merged


def summary(runs: dict[Run, list[dict[str, Any]]]) -> list[str]:
    """A line per run: release 2 and the last release's seconds, their ratio, peak memory."""
    lines = []
    for (label, size), records in runs.items():
        done = [r for r in records if "refused" not in r]
        by_no = {r["release"]: r for r in done}
        last = done[-1] if done else None
        second = by_no.get(2)
        refused = [r["release"] for r in records if "refused" in r]
        text = f"{label or '-'} {size:,} rows: {len(done)} releases published"
        if refused:
            text += f", refused {refused}"
        if second and last:
            ratio = last["publish_seconds"] / second["publish_seconds"]
            peak = max(r["peak_rss_mib"] for r in done)
            text += (
                f"; release 2 {second['publish_seconds']:.2f} s, release {last['release']} "
                f"{last['publish_seconds']:.2f} s ({ratio:.1f}x); peak RSS {peak:.0f} MiB "
                f"({peak / second['peak_rss_mib']:.2f}x release 2's)"
            )
        lines.append(text)
    return lines


def draw(runs: dict[Run, list[dict[str, Any]]], out: Path, log: bool = False) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    figure, (time_axis, memory_axis) = plt.subplots(1, 2, figsize=(11, 4.2))
    stacked = list(runs)[-1] if runs else None
    for key, records in runs.items():
        label, size = key
        name = f"{label} ({size:,} rows)" if label else f"{size:,} rows"
        done = [r for r in records if "refused" not in r]
        numbers = [r["release"] for r in done]
        if key == stacked:
            bottom = [0.0] * len(done)
            for phase in PHASES:
                values = [float(r.get("phases", {}).get(phase, 0.0)) for r in done]
                time_axis.bar(numbers, values, bottom=bottom, label=f"{name}: {phase}", alpha=0.6)
                bottom = [b + v for b, v in zip(bottom, values, strict=True)]
        time_axis.plot(numbers, [r["publish_seconds"] for r in done], marker="o", label=name)
        refused = [r for r in records if "refused" in r]
        if refused:
            time_axis.scatter(
                [r["release"] for r in refused],
                [r["publish_seconds"] for r in refused],
                marker="x",
                s=60,
                color="red",
                label=f"{name}: refused",
            )
        memory_axis.plot(
            numbers, [r["peak_rss_mib"] for r in done], marker="o", label=f"{name} peak"
        )
        current = [r.get("rss_mib") for r in done]
        if all(c is not None for c in current):
            memory_axis.plot(numbers, current, linestyle="--", label=f"{name} after release")
    if log:
        time_axis.set_yscale("log")
    for axis in (time_axis, memory_axis):
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    time_axis.set_xlabel("release number")
    time_axis.set_ylabel("publish seconds (CPU where --cpu)")
    time_axis.set_title("Publish time per release")
    time_axis.legend(fontsize=7)
    memory_axis.set_xlabel("release number")
    memory_axis.set_ylabel("MiB resident")
    memory_axis.set_title("Memory of the publishing process")
    memory_axis.legend(fontsize=7)
    figure.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--out", type=Path, default=FIGURE)
    parser.add_argument("--labels", nargs="+", help="runs to draw, in this order")
    parser.add_argument("--log", action="store_true", help="publish seconds on a log scale")
    parser.add_argument("--cpu", action="store_true", help="CPU seconds instead of wall seconds")
    parser.add_argument(
        "--median", action="store_true", help="join runs labelled '<label> runN' by median"
    )
    args = parser.parse_args(argv)
    runs = load(args.results, args.labels)
    if not runs:
        raise SystemExit(f"no records in {args.results}")
    if args.median:
        runs = median_runs(runs)
    if args.cpu:
        use_cpu_seconds(runs)
    for line in summary(runs):
        print(line)
    draw(runs, args.out, args.log)
    print(f"figure: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

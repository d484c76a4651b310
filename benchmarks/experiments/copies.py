"""Counts analysts read: private copies published against true, release by release.

Publishes one SeGen series twice with Sanony, once with BP's least global lift (the default)
and once with Lemma 4's on whole releases (``global_lift: "lemma4"``, the ratchet of earlier
versions), and prints per release, for each: the L1 distortion of the private copies
(``Σ|published − true| / Σ true``), the signed net, the terms off by more than max(3 copies,
20%), counterfeit rows (share of the published rows), suppressed copies, publish seconds; then
the auditors' judge on each series' public JSON. Writes a markdown table with ``--markdown``.

    python -m benchmarks.experiments.copies --corpus 1 --size 3000 --releases 5 --seed 1
    python -m benchmarks.experiments.copies --corpus 2 --size 20000 --releases 12 --markdown out.md
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.soundness import SIZES, judge, publish_series

MODES = ("least", "lemma4")


def _cell(row: dict[str, Any]) -> str:
    copies = row["copies"]
    cf = row["counterfeits"] / max(row["rows"], 1)
    return (
        f"{copies['distortion']:.1%} / {copies['net']:+.1%} / {copies['terms_off']} | "
        f"{row['counterfeits']} ({cf:.2%}) | {row['suppressed']} | {row['seconds']:.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--corpus", type=int, choices=(1, 2), default=1)
    parser.add_argument("--size", type=int, default=3000, help="rows per release")
    parser.add_argument("--releases", type=int, default=5)
    parser.add_argument("--rep", type=float, default=0.4)
    parser.add_argument("--r-th", type=float, default=8.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--params", default="{}", help="extra Sanony parameters as JSON")
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    parser.add_argument("--markdown", type=Path, default=None)
    args = parser.parse_args()
    extra = json.loads(args.params)
    sz = args.size / SIZES[args.corpus]
    results: dict[str, dict[str, Any]] = {}
    for mode in args.modes:
        with tempfile.TemporaryDirectory() as folder:
            result = publish_series(
                args.corpus,
                sz,
                args.rep,
                args.r_th,
                args.seed,
                args.releases,
                "sanony",
                {**extra, "global_lift": mode},
                Path(folder),
            )
            result["judge"] = judge(Path(folder))
        results[mode] = result
        for row in result["releases"]:
            print(f"{mode} release {row['release_no']}: {_cell(row)}", flush=True)
        if result["failure"]:
            print(f"{mode} release {result['failure']['release_no']}: refused", flush=True)
        print(f"{mode}: judge finds {result['judge']} rows over r_th", flush=True)
    title = (
        f"B{args.corpus}, {args.releases} x {args.size} rows, rep {args.rep:.0%}, "
        f"r_th {args.r_th:g}, seed {args.seed}"
    )
    head = " | ".join(
        f"{mode}: copies L1 / net / terms off | counterfeit rows | suppressed | s"
        for mode in args.modes
    )
    lines = [f"### {title}", "", f"| release | {head} |"]
    lines.append("|---" * (1 + 4 * len(args.modes)) + "|")
    for i in range(args.releases):
        cells = []
        for mode in args.modes:
            rows = results[mode]["releases"]
            cells.append(_cell(rows[i]) if i < len(rows) else "refused | | |")
        lines.append(f"| {i + 1} | {' | '.join(cells)} |")
    lines.append("")
    lines.append(
        "judge, rows over r_th: "
        + ", ".join(f"{mode} {results[mode]['judge']}" for mode in args.modes)
    )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown is not None:
        with args.markdown.open("a", encoding="utf-8") as sink:
            sink.write(text + "\n")


if __name__ == "__main__":
    main()

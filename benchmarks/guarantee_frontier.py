"""The frontier of the two guarantees: what each keeps for analysts at each r_th (design.md §5.8).

For every series of the grid (SeGen of BMS-WebView-1 and -2, five releases, rep 40%, 10% of
the terms private, seeded as ``benchmarks/soundness.py``) and every ``r_th`` of ``--r-th``, the
snapshots are published three ways through ``serialpub publish-local``: Sanony's default
(``guarantee: true_rows``, sized for twenty releases), the same for a five-release horizon
(``horizon: 5``), the paper's mechanism (``guarantee: paper``) and Anony (no serial
protection, the baseline). The outside auditors' programs (run, never imported) judge each:
``judge.py`` (every published row), ``true_rows.py`` (every counterfeit the ledgers name taken
out) and ``distortion.py`` (what an analyst reads, beside Anony's releases). Per (series, r_th,
mode): releases published or refused, rows over r_th as published and on the true rows alone,
private copies inside clusters, pair error and its ratio to Anony's, private-copy L1 and net
bias (worst and mean release), suppressed private copies and public terms (the publication
reports), and publish seconds.

    python -m benchmarks.guarantee_frontier                 # the grid: B1 and B2 seeds 1-3
    python -m benchmarks.guarantee_frontier --only B1-s1 --r-th 8
    python -m benchmarks.guarantee_frontier --report-only   # the table from the results file

One JSON line per (series, r_th, mode) goes to ``benchmarks/results/guarantee_frontier.jsonl``;
the markdown table (``guarantee_frontier.md``) is rewritten from every line after each run.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.segen import choose_private_terms, segen
from app.io.corpora import corpora_dir
from app.io.corpus import read_corpus
from benchmarks.auditor import DISTORTION, JUDGE, auditor_dir

RESULTS = Path(__file__).resolve().parent / "results"
JSONL = RESULTS / "guarantee_frontier.jsonl"
TABLE = RESULTS / "guarantee_frontier.md"
TRUE_ROWS = auditor_dir() / "true_rows.py"

#: (label, method, params beyond r_th); Anony first, the others are read beside it.
MODES: list[tuple[str, str, dict[str, Any]]] = [
    ("anony", "anony", {}),
    ("true_rows", "sanony", {}),
    ("true_rows h5", "sanony", {"horizon": 5}),
    ("paper", "sanony", {"guarantee": "paper"}),
]


@dataclass(frozen=True)
class Series:
    label: str
    corpus: int
    size: int
    releases: int
    seed: int


SERIES = [
    Series("B1-s1", 1, 3000, 5, 1),
    Series("B1-s2", 1, 3000, 5, 2),
    Series("B1-s3", 1, 3000, 5, 3),
    Series("B2-s1", 2, 5000, 5, 1),
    Series("B2-s2", 2, 5000, 5, 2),
    Series("B2-s3", 2, 5000, 5, 3),
]

_JUDGE = re.compile(
    r"^release (\d+): \d+ rows, max serial risk ([\d.]+), rows over r_th .*: (\d+)$"
)
_DIST = re.compile(
    r"^release (\d+): private copies L1 ([\d.]+)% \(net ([-+][\d.]+)%\), ([\d.]+)% inside clusters;"
    r" .*; pair error ([\d.na]+)(?: \| compare: L1 [\d.]+%, inside [\d.]+%, pair error ([\d.na]+))?"
)


def write_inputs(series: Series, folder: Path) -> tuple[list[Path], Path]:
    """The series' snapshots and private terms, as ``benchmarks/soundness.py`` draws them."""
    corpus = read_corpus(corpora_dir() / f"bms-webview-{series.corpus}.dat")
    private = choose_private_terms([t for tr in corpus for t in tr.terms], 0.1, seed=series.seed)
    private_file = folder / "private.txt"
    private_file.write_text("\n".join(sorted(private)) + "\n", encoding="utf-8")
    snapshots = []
    for no, release in enumerate(
        segen(len(corpus), series.size, series.releases, 0.4, seed=series.seed), 1
    ):
        path = folder / f"snap{no}.dat"
        path.write_text(
            "\n".join(" ".join(sorted(corpus[p].terms)) for p in release) + "\n", encoding="utf-8"
        )
        snapshots.append(path)
    return snapshots, private_file


def publish(
    method: str, snapshots: list[Path], private: Path, params: dict[str, Any], out: Path
) -> dict[str, Any]:
    """``serialpub publish-local``; the releases written, the refusal if any, the seconds."""
    started = time.perf_counter()
    done = subprocess.run(
        [
            str(Path(sys.executable).parent / "serialpub"),
            "publish-local",
            *map(str, snapshots),
            "--out",
            str(out),
            "--method",
            method,
            "--private-file",
            str(private),
            "--params",
            json.dumps(params),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    published = len(list(out.glob("release-*.json")))
    refusal = None
    if published < len(snapshots):
        lines = [line for line in (done.stderr + done.stdout).splitlines() if line.strip()]
        refusal = next((x for x in lines if "cannot" in x or "error" in x), lines[-1:] or [""])
        refusal = (refusal if isinstance(refusal, str) else refusal[0])[-400:]
    return {
        "published": published,
        "refusal": refusal,
        "seconds": round(time.perf_counter() - started, 2),
    }


def _run(command: list[str]) -> str:
    return subprocess.run(command, capture_output=True, text=True, check=False).stdout


def judged(out: Path, ledgers: Path | None) -> dict[str, Any]:
    """The auditors' judge on the releases, and on their true rows alone."""
    figures: dict[str, Any] = {}
    for key, command in (
        ("as_published", [sys.executable, str(JUDGE), str(out)]),
        (
            "true_rows",
            [sys.executable, str(TRUE_ROWS), str(out)]
            + (["--ledger", str(ledgers)] if ledgers else []),
        ),
    ):
        rows = [_JUDGE.match(line) for line in _run(command).splitlines()]
        found = [m for m in rows if m]
        figures[key] = {
            "rows_over": sum(int(m[3]) for m in found),
            "max_risk": max((float(m[2]) for m in found), default=0.0),
        }
    return figures


def read(out: Path, snapshots: list[Path], private: Path, compare: Path) -> list[dict[str, Any]]:
    """distortion.py's figures per release, with Anony's pair error beside."""
    text = _run(
        [
            sys.executable,
            str(DISTORTION),
            str(out),
            *map(str, snapshots),
            "--private-file",
            str(private),
            "--compare",
            str(compare),
        ]
    )
    found = []
    for line in text.splitlines():
        m = _DIST.match(line)
        if m:
            found.append(
                {
                    "release_no": int(m[1]),
                    "l1": float(m[2]) / 100,
                    "net": float(m[3]) / 100,
                    "inside": float(m[4]) / 100,
                    "pair_error": _float(m[5]),
                    "anony_pair_error": _float(m[6]),
                }
            )
    return found


def _float(text: str | None) -> float | None:
    try:
        return None if text is None else float(text)
    except ValueError:
        return None


def reported(out: Path) -> dict[str, int]:
    """Suppressed private copies and public terms over the series (the publication reports)."""
    path = out / "report.json"
    if not path.exists():
        return {"suppressed_copies": 0, "public_terms_suppressed": 0, "counterfeits": 0}
    reports = json.loads(path.read_text(encoding="utf-8"))
    items = [r.get("report", r) for r in reports]
    return {
        "suppressed_copies": sum(sum((r.get("suppressed") or {}).values()) for r in items),
        "public_terms_suppressed": sum(int(r.get("public_terms_suppressed") or 0) for r in items),
        "counterfeits": sum(int(r.get("counterfeits") or 0) for r in items),
    }


def measure(series: Series, r_th: float, folder: Path) -> list[dict[str, Any]]:
    snapshots, private = write_inputs(series, folder)
    outs = {label: folder / f"{label.replace(' ', '-')}-{r_th:g}" for label, _, _ in MODES}
    lines = []
    for label, method, extra in MODES:
        out = outs[label]
        ran = publish(method, snapshots, private, {"r_th": r_th, **extra}, out)
        ledgers = Path(f"{out}.private")
        per_release = read(out, snapshots, private, outs["anony"])
        lines.append(
            {
                "series": series.label,
                "r_th": r_th,
                "mode": label,
                **ran,
                "releases": series.releases,
                "judge": judged(out, ledgers if ledgers.is_dir() else None),
                **reported(out),
                "per_release": per_release,
            }
        )
    return lines


def summary(line: dict[str, Any]) -> dict[str, Any]:
    """One table row's figures from a JSON line."""
    per = line["per_release"]
    ratios = [
        r["pair_error"] / r["anony_pair_error"]
        for r in per
        if r["pair_error"] is not None and r["anony_pair_error"]
    ]
    return {
        "published": f"{line['published']}/{line['releases']}",
        "over": line["judge"]["as_published"]["rows_over"],
        "true_over": line["judge"]["true_rows"]["rows_over"],
        "inside": _mean([r["inside"] for r in per]),
        "pair": _mean([r["pair_error"] for r in per if r["pair_error"] is not None]),
        "pair_ratio": _mean(ratios),
        "l1_max": max((r["l1"] for r in per), default=0.0),
        "net_mean": _mean([r["net"] for r in per]),
        "suppressed": line["suppressed_copies"],
        "public": line["public_terms_suppressed"],
        "seconds": line["seconds"],
    }


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def summary_table(latest: dict[tuple[str, float, str], dict[str, Any]]) -> str:
    """Per corpus, r_th and mode, over its seeds: releases published, rows over r_th (as
    published, and on the true rows alone), private copies inside clusters, pair error
    against Anony's, private-copy L1 (worst release) and net bias, copies and public terms
    suppressed, publish seconds (medians where a median is the figure)."""
    groups: dict[tuple[str, float, str], list[dict[str, Any]]] = {}
    for (series, r_th, mode), line in latest.items():
        groups.setdefault((series.split("-")[0], r_th, mode), []).append(summary(line))
    head = (
        "| corpus | r_th | mode | published | rows over (true rows alone) | inside clusters "
        "| pair error x Anony | private-copy L1 worst (net) | suppressed copies / public "
        "terms a series | seconds a series |\n|---|---|---|---|---|---|---|---|---|---|\n"
    )
    order = {label: i for i, (label, _, _) in enumerate(MODES)}
    body = ""
    for (corpus, r_th, mode), rows in sorted(
        groups.items(), key=lambda kv: (kv[0][0], kv[0][1], order.get(kv[0][2], 9))
    ):
        published = sum(int(r["published"].split("/")[0]) for r in rows)
        total = sum(int(r["published"].split("/")[1]) for r in rows)
        ratios = [r["pair_ratio"] for r in rows]
        body += (
            f"| {corpus} | {r_th:g} | {mode} | {published}/{total} | "
            f"{sum(r['over'] for r in rows)} ({sum(r['true_over'] for r in rows)}) | "
            f"{_mean([r['inside'] for r in rows]):.1%} | "
            f"{min(ratios):.2f}-{max(ratios):.2f} | "
            f"{max(r['l1_max'] for r in rows):.1%} ({_mean([r['net_mean'] for r in rows]):+.1%}) | "
            f"{round(_mean([r['suppressed'] for r in rows]))} / "
            f"{round(_mean([r['public'] for r in rows]))} | "
            f"{statistics.median(r['seconds'] for r in rows):.0f} |\n"
        )
    return head + body


def write_table(path: Path = JSONL) -> str:
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    latest: dict[tuple[str, float, str], dict[str, Any]] = {}
    for line in lines:
        latest[line["series"], line["r_th"], line["mode"]] = line
    head = (
        "| series | r_th | mode | published | rows over (true rows alone) | inside clusters | "
        "pair error (x Anony) | private-copy L1 worst / net mean | suppressed copies / "
        "public terms | seconds |\n|---|---|---|---|---|---|---|---|---|---|\n"
    )
    body = ""
    for (series, r_th, mode), line in sorted(latest.items()):
        s = summary(line)
        body += (
            f"| {series} | {r_th:g} | {mode} | {s['published']} | {s['over']} ({s['true_over']}) "
            f"| {s['inside']:.1%} | {s['pair']:.3f} ({s['pair_ratio']:.2f}x) | "
            f"{s['l1_max']:.1%} / {s['net_mean']:+.1%} | {s['suppressed']} / {s['public']} | "
            f"{s['seconds']:.0f} |\n"
        )
    table = head + body
    by_corpus = summary_table(latest)
    TABLE.write_text(
        "# The frontier of the two guarantees\n\nWritten by `python -m "
        "benchmarks.guarantee_frontier` from `guarantee_frontier.jsonl` (its docstring says "
        "what each column is; every figure is the series' five releases).\n\n## By corpus, "
        "over seeds 1-3\n\n" + by_corpus + "\n## Every series\n\n" + table,
        encoding="utf-8",
    )
    return by_corpus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="series labels (default: every one)")
    parser.add_argument("--r-th", nargs="*", type=float, default=[2.0, 4.0, 8.0, 16.0])
    parser.add_argument("--report-only", action="store_true")
    args = parser.parse_args()
    if not args.report_only:
        RESULTS.mkdir(exist_ok=True)
        chosen = [s for s in SERIES if not args.only or s.label in args.only]
        for series in chosen:
            for r_th in args.r_th:
                with tempfile.TemporaryDirectory() as tmp:
                    for line in measure(series, r_th, Path(tmp)):
                        with JSONL.open("a", encoding="utf-8") as fh:
                            fh.write(json.dumps(line) + "\n")
                        s = summary(line)
                        print(f"{series.label} r_th {r_th:g} {line['mode']}: {s}", flush=True)
    print(write_table())


if __name__ == "__main__":
    main()

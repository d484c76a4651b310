"""Private terms in context: which Sanony levers carry the cost against Anony.

For each series (SeGen of BMS-WebView-1 or -2, or one whole-corpus release) it writes the raw
snapshots and the private terms (10% of the terms, random, seeded as in
``benchmarks/soundness.py``) into a temporary folder, publishes them with Anony (the baseline)
and with Sanony under each parameter variant through ``serialpub publish-local``, runs the
auditors' judge and distortion reader on every Sanony series (as subprocesses: the shared
scripts are run, never copied) and records per release: published or not, the judge's rows
over ``r_th``, the share of private copies inside cluster bags and the pair error, each with
Anony's and the ratio Sanony / Anony, the L1 copy distortion, the counterfeit rows and the
publish time. One JSON line per (series, variant) goes to ``--jsonl``; the markdown table is
rewritten from all lines after each run.

    python -m benchmarks.experiments.context_levers --plan main
    python -m benchmarks.experiments.context_levers --plan extra --only B1-s1
    python -m benchmarks.experiments.context_levers --report-only

Targets: inside share >= 0.8x Anony's, pair error <= 1.1x Anony's, judge 0 rows
over ``r_th``, every release published.
"""

from __future__ import annotations

import argparse
import json
import re
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
from benchmarks.auditor import DISTORTION, JUDGE

DATA = corpora_dir()
RESULTS = Path(__file__).resolve().parent / "results"
INSIDE_TARGET = 0.8
PAIR_TARGET = 1.1
#: Diagnostics, not parameters: publish with ``one_set_to_bag`` (the first part of ``align``)
#: a no-op (``off``), or applied only to clusters where the empty non-private set (rows of
#: private terms only) holds most rows (``empty``), the rest of alignment kept.
_DIAG = "_one_set_rule"
_PATCHES = {
    "off": "s.one_set_to_bag = lambda *a, **k: collections.Counter(); ",
    "empty": (
        "import app.core.risk.state as st; st.ClusterState.of_one_set = property(lambda c: "
        "2 * sum(k for r, k in c.counts.items() if not r) > max(c.n_true, 1)); "
    ),
}


def _patched(which: str) -> str:
    return (
        "import collections, sys; import app.core.perturbation.sanony as s; "
        + _PATCHES[which]
        + "from app.cli import main; sys.argv = ['serialpub', *sys.argv[1:]]; main()"
    )


@dataclass(frozen=True)
class Series:
    label: str
    corpus: int
    size: int | None  # rows a release; None: the whole corpus, one release
    releases: int
    rep: float
    seed: int
    r_th: float


SERIES = [
    Series("B1-s1", 1, 3000, 5, 0.4, 1, 8.0),
    Series("B1-s2", 1, 3000, 5, 0.4, 2, 8.0),
    Series("B2-s1", 2, 10000, 5, 0.4, 1, 8.0),
    Series("B1-whole", 1, None, 1, 0.0, 1, 8.0),
    Series("B2-whole", 2, None, 1, 0.0, 1, 8.0),
    Series("B1-s1-r4", 1, 3000, 5, 0.4, 1, 4.0),
    Series("B2-20k-s1", 2, 20000, 5, 0.4, 1, 8.0),  # run with --only B2-20k-s1 (slow)
]


def variants(plan: str, r_th: float) -> list[tuple[str, dict[str, Any]]]:
    """(label, params beyond r_th and seed) for a plan."""
    if plan == "main":
        return [
            ("defaults", {}),
            (f"anony_r_th {0.75 * r_th:g}", {"anony_r_th": 0.75 * r_th}),
            (f"anony_r_th {r_th:g} (= r_th)", {"anony_r_th": r_th}),
        ]
    if plan == "defaults":
        return [("defaults", {})]
    if plan == "eq":
        return [(f"anony_r_th {r_th:g} (= r_th)", {"anony_r_th": r_th})]
    if plan == "diag":
        label = f"anony_r_th {r_th:g}, no one-set rule (diagnostic)"
        return [(label, {"anony_r_th": r_th, _DIAG: "off"})]
    if plan == "diag-empty":
        label = f"anony_r_th {r_th:g}, one-set rule on the empty set only (diagnostic)"
        return [(label, {"anony_r_th": r_th, _DIAG: "empty"})]
    align = (f"anony_r_th {r_th:g}, align false", {"anony_r_th": r_th, "align": False})
    size = (f"anony_r_th {r_th:g}, cluster_size 20", {"anony_r_th": r_th, "cluster_size": 20})
    return {"extra": [align, size], "align": [align], "size": [size]}[plan]


def write_inputs(series: Series, folder: Path) -> tuple[list[Path], Path]:
    corpus = read_corpus(DATA / f"bms-webview-{series.corpus}.dat")
    private = choose_private_terms([t for tr in corpus for t in tr.terms], 0.1, seed=series.seed)
    private_file = folder / "private.txt"
    private_file.write_text("\n".join(sorted(private)) + "\n", encoding="utf-8")
    if series.size is None:
        positions = [list(range(len(corpus)))]
    else:
        positions = segen(len(corpus), series.size, series.releases, series.rep, seed=series.seed)
    snapshots = []
    for no, release in enumerate(positions, 1):
        path = folder / f"snap{no}.dat"
        path.write_text(
            "\n".join(" ".join(sorted(corpus[p].terms)) for p in release) + "\n", encoding="utf-8"
        )
        snapshots.append(path)
    return snapshots, private_file


_DONE = re.compile(r"release (\d+), (\d+) rows, (\d+) counterfeits, ([\d.]+) s")
_JUDGE = re.compile(
    r"^release (\d+): (\d+) rows, max serial risk ([\d.]+), rows over r_th .*: (\d+)$"
)
_DIST = re.compile(
    r"^release (\d+): private copies L1 ([\d.]+)% \(net [-+][\d.]+%\), ([\d.]+)% inside clusters; "
    r"counterfeit rows (\d+), published count (\d+); pair error ([\d.]+) \| compare: L1 [\d.]+%, "
    r"inside ([\d.]+)%, pair error ([\d.]+)"
)


def publish(
    method: str, snapshots: list[Path], private: Path, params: dict[str, Any], out: Path
) -> dict[str, Any]:
    params = dict(params)
    command = [str(Path(sys.executable).parent / "serialpub")]
    if which := params.pop(_DIAG, None):
        command = [sys.executable, "-c", _patched(which)]
    started = time.perf_counter()
    done = subprocess.run(
        [
            *command,
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
    per_release = {
        int(m[1]): {"rows": int(m[2]), "counterfeits": int(m[3]), "seconds": float(m[4])}
        for m in _DONE.finditer(done.stderr)
    }
    failure = None
    # publish-local exits 1 when rows are over r_th (Anony's always are), with every release
    # written: a failure is a series it could not finish.
    if done.returncode != 0 and len(per_release) < len(snapshots):
        tail = [line for line in (done.stderr + done.stdout).splitlines() if line.strip()]
        failure = tail[-1][-300:] if tail else f"exit {done.returncode}"
    return {
        "per_release": per_release,
        "failure": failure,
        "seconds": round(time.perf_counter() - started, 2),
    }


def extra_size(extra: dict[str, Any]) -> dict[str, Any]:
    return {"cluster_size": extra["cluster_size"]}


def distortion(out: Path, snapshots: list[Path], private: Path, compare: Path) -> str:
    done = subprocess.run(
        [
            sys.executable,
            str(DISTORTION),
            str(out),
            *map(str, snapshots),
            "--private-file",
            str(private),
            "--compare",
            str(compare),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout


def run_series(series: Series, plan: str, sink: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="levers-") as tmp:
        folder = Path(tmp)
        snapshots, private = write_inputs(series, folder)
        base = {"r_th": series.r_th, "seed": series.seed}
        anony = publish("anony", snapshots, private, base, folder / "anony")
        if anony["failure"]:
            raise SystemExit(f"{series.label}: Anony failed: {anony['failure']}")
        for label, extra in variants(plan, series.r_th):
            out = folder / f"sanony-{len(label)}-{abs(hash(label))}"
            result = publish("sanony", snapshots, private, {**base, **extra}, out)
            published = len(result["per_release"])
            releases: dict[int, dict[str, Any]] = {
                no: dict(row) for no, row in result["per_release"].items()
            }
            judge_total = None
            if published:
                j = subprocess.run(
                    [sys.executable, str(JUDGE), str(out)],
                    capture_output=True,
                    text=True,
                    check=False,
                )
                for line in j.stdout.splitlines():
                    if m := _JUDGE.match(line):
                        releases[int(m[1])]["judge_over"] = int(m[4])
                        releases[int(m[1])]["max_risk"] = float(m[3])
                    if line.startswith("rows over r_th in the series:"):
                        judge_total = int(line.rsplit(":", 1)[1])
                text = distortion(out, snapshots[:published], private, folder / "anony")
                for line in text.splitlines():
                    if m := _DIST.match(line):
                        releases[int(m[1])].update(
                            l1=float(m[2]),
                            inside=float(m[3]),
                            cf_rows=int(m[4]),
                            cf_said=int(m[5]),
                            pair=float(m[6]),
                            anony_inside=float(m[7]),
                            anony_pair=float(m[8]),
                        )
            if published and "cluster_size" in extra:
                # Anony at the same cluster size: bigger clusters keep more copies inside
                # for Anony too, so the default-size ratio flatters the variant.
                same = folder / f"anony-{extra['cluster_size']}"
                if not same.exists():
                    publish("anony", snapshots, private, {**base, **extra_size(extra)}, same)
                for line in distortion(out, snapshots[:published], private, same).splitlines():
                    if m := _DIST.match(line):
                        releases[int(m[1])].update(same_inside=float(m[7]), same_pair=float(m[8]))
            record = {
                "series": series.label,
                "corpus": series.corpus,
                "size": series.size,
                "releases": series.releases,
                "rep": series.rep,
                "seed": series.seed,
                "r_th": series.r_th,
                "variant": label,
                "params": {k: v for k, v in {**base, **extra}.items() if k != _DIAG},
                "published": published,
                "failure": result["failure"],
                "judge_total": judge_total,
                "per_release": [releases[no] | {"release_no": no} for no in sorted(releases)],
                "anony_seconds": anony["seconds"],
            }
            with sink.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(record) + "\n")
            print(summary_line(record), flush=True)


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return a / b


def _fmt(x: float | None, spec: str = ".2f") -> str:
    return "-" if x is None else format(x, spec)


def summarise(record: dict[str, Any]) -> dict[str, Any]:
    rows = record["per_release"]
    inside = [_ratio(r.get("inside"), r.get("anony_inside")) for r in rows]
    pair = [_ratio(r.get("pair"), r.get("anony_pair")) for r in rows]
    same_inside = [_ratio(r.get("inside"), r.get("same_inside")) for r in rows]
    same_pair = [_ratio(r.get("pair"), r.get("same_pair")) for r in rows]
    same_inside = [x for x in same_inside if x is not None]
    same_pair = [x for x in same_pair if x is not None]
    cf = [100 * r["counterfeits"] / r["rows"] for r in rows if r.get("rows")]
    inside = [x for x in inside if x is not None]
    pair = [x for x in pair if x is not None]
    all_published = record["published"] == record["releases"]
    meets = (
        all_published
        and record["judge_total"] == 0
        and bool(inside)
        and min(inside) >= INSIDE_TARGET
        and max(pair) <= PAIR_TARGET
    )
    return {
        "inside_min": min(inside) if inside else None,
        "pair_max": max(pair) if pair else None,
        "cf_max": max(cf) if cf else None,
        "l1_max": max((r.get("l1", 0.0) for r in rows), default=None),
        "seconds": sum(r.get("seconds", 0.0) for r in rows),
        "meets": meets,
        "same": (min(same_inside), max(same_pair)) if same_inside and same_pair else None,
    }


def summary_line(record: dict[str, Any]) -> str:
    s = summarise(record)
    return (
        f"{record['series']} {record['variant']}: published {record['published']}/"
        f"{record['releases']}, judge {record['judge_total']}, inside ratio min "
        f"{_fmt(s['inside_min'])}, pair ratio max {_fmt(s['pair_max'])}, cf max "
        f"{_fmt(s['cf_max'])}%, L1 max {_fmt(s['l1_max'], '.1f')}%, {s['seconds']:.1f} s, "
        f"meets {s['meets']}" + (f", failure {record['failure']}" if record["failure"] else "")
    )


def report(sink: Path, target: Path) -> None:
    records = [json.loads(line) for line in sink.read_text(encoding="utf-8").splitlines() if line]
    lines = [
        "# Private terms in context: Sanony's levers against Anony",
        "",
        "Written by `python -m benchmarks.experiments.context_levers`.",
        "Series: SeGen of BMS-WebView-1 (B1) or",
        "-2 (B2), rep 40%, 10% of the terms private (random, seeded), `seed` = the series seed;",
        "`whole`: the whole corpus as one release. Anony (same `r_th`, same snapshots) is the",
        "baseline. Judge: `../shared/auditor/judge.py` rows over `r_th`; inside, pair, L1 and",
        "counterfeit rows from `../shared/auditor/distortion.py --compare` (Anony's releases).",
        f"Targets: inside ratio >= {INSIDE_TARGET}, pair ratio <= {PAIR_TARGET}, judge 0,",
        "every release published.",
        "",
        "## Summary per series and variant",
        "",
        "| series | r_th | variant | published | judge over | inside S/A min | pair S/A max "
        "| cf rows max | L1 max | publish s | meets | vs Anony at same cluster_size |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in records:
        s = summarise(r)
        same = (
            "-"
            if s["same"] is None
            else f"inside min {s['same'][0]:.2f}, pair max {s['same'][1]:.2f}"
        )
        lines.append(
            f"| {r['series']} | {r['r_th']:g} | {r['variant']} | {r['published']}/{r['releases']}"
            f" | {r['judge_total']} | {_fmt(s['inside_min'])} | {_fmt(s['pair_max'])}"
            f" | {_fmt(s['cf_max'])}% | {_fmt(s['l1_max'], '.1f')}% | {s['seconds']:.1f}"
            f" | {'yes' if s['meets'] else 'no'} | {same} |"
        )
    lines += [
        "",
        "## Per release",
        "",
        "Inside and pair: Sanony / Anony (ratio). cf: counterfeit rows beyond the snapshot, % of",
        "the published rows (published count in brackets). Same-size: the ratios against Anony",
        "at the variant's `cluster_size` (inside / pair).",
        "",
        "| series | variant | rel | judge over | max risk | inside S / A (ratio) "
        "| pair S / A (ratio) | L1 | cf rows (said) | s | same-size ratios |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in records:
        for row in r["per_release"]:
            inside = _ratio(row.get("inside"), row.get("anony_inside"))
            pair = _ratio(row.get("pair"), row.get("anony_pair"))
            cf = 100 * row["counterfeits"] / row["rows"] if row.get("rows") else None
            same = "-"
            if "same_inside" in row:
                same_inside = _ratio(row.get("inside"), row["same_inside"])
                same_pair = _ratio(row.get("pair"), row["same_pair"])
                same = f"{_fmt(same_inside)} / {_fmt(same_pair)}"
            lines.append(
                f"| {r['series']} | {r['variant']} | {row['release_no']}"
                f" | {row.get('judge_over', '-')} | {_fmt(row.get('max_risk'), '.3f')}"
                f" | {_fmt(row.get('inside'), '.1f')}% / {_fmt(row.get('anony_inside'), '.1f')}%"
                f" ({_fmt(inside)}) | {_fmt(row.get('pair'), '.3f')} /"
                f" {_fmt(row.get('anony_pair'), '.3f')} ({_fmt(pair)})"
                f" | {_fmt(row.get('l1'), '.1f')}% | {_fmt(cf)}% ({row.get('cf_said', '-')})"
                f" | {row.get('seconds', '-')} | {same} |"
            )
        if r["failure"]:
            lines.append(
                f"| {r['series']} | {r['variant']} | {r['published'] + 1} | refused: "
                f"{r['failure'].replace('|', '/')} | | | | | | | |"
            )
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--plan",
        choices=("main", "extra", "align", "size", "defaults", "eq", "diag", "diag-empty"),
        default="main",
    )
    parser.add_argument("--only", nargs="*", help="series labels to run (default: all)")
    parser.add_argument("--jsonl", type=Path, default=RESULTS / "context_levers.jsonl")
    parser.add_argument("--markdown", type=Path, default=RESULTS / "context_levers.md")
    parser.add_argument("--report-only", action="store_true")
    args = parser.parse_args()
    if not args.report_only:
        for series in SERIES:
            if args.only and series.label not in args.only:
                continue
            run_series(series, args.plan, args.jsonl)
            report(args.jsonl, args.markdown)
    report(args.jsonl, args.markdown)


if __name__ == "__main__":
    main()

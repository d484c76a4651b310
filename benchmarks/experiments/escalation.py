"""Escalation instead of refusal: which series escalate, how far, at what cost.

The reviewer's cases: five BMS-WebView-1 SeGen snapshots (800 transactions, rep 50%, r_th 8,
seed 9) published in eight orders (the SeGen order and seven shuffles, ``random.Random(k)``
for k = 1..7), and BMS-WebView-1 5 x 1,000 at r_th 2 (rep 40%, the grid's default) for seeds
1-3. Each series is published with the defaults (``on_infeasible = "escalate"``); per release
it reports whether it escalated (a release that escalated is the one ``"refuse"`` refuses), the
step that published it, the clusters before and after, the copies suppressed beyond the budget
per term, and utility: private copies published against true (``copy_distortion``) and
counterfeit rows. Every series is written as public JSON by ``serialpub publish-local`` and
judged by the auditors' reference judge (``../shared/auditor/judge.py DIR --worst 5``).

    python -m benchmarks.experiments.escalation \\
        --results benchmarks/experiments/results/escalation.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from app.core.history import SeriesHistory
from app.core.model import Transaction
from app.core.params import parse_params
from app.core.pipeline import publish
from app.core.segen import choose_private_terms, segen
from app.io.corpora import corpora_dir
from app.io.corpus import read_corpus
from app.io.public import release_document
from benchmarks.auditor import JUDGE

DATA = corpora_dir()


def cases() -> list[dict[str, Any]]:
    """The reviewer's series: (size, rep, r_th, seed, order)."""
    found: list[dict[str, Any]] = []
    for k in range(8):
        order = list(range(5))
        if k:
            random.Random(k).shuffle(order)
        found.append({"size": 800, "rep": 0.5, "r_th": 8.0, "seed": 9, "order": order})
    for seed in (1, 2, 3):
        found.append({"size": 1000, "rep": 0.4, "r_th": 2.0, "seed": seed, "order": list(range(5))})
    return found


def run_case(
    case: dict[str, Any], corpus: list[Transaction], work: Path, local: bool = True
) -> dict[str, Any]:
    """Publish one series in process (the figures) and with ``serialpub publish-local`` (the
    public JSON the judge reads); the two must agree release by release. Without ``local``
    the judge reads the in-process releases' public JSON instead."""
    seed, r_th = case["seed"], case["r_th"]
    private = choose_private_terms([t for tr in corpus for t in tr.terms], 0.1, seed=seed)
    snapshots = list(segen(len(corpus), case["size"], 5, case["rep"], seed=seed))
    params = parse_params("sanony", {"r_th": r_th, "seed": seed})
    history = SeriesHistory()
    releases: list[dict[str, Any]] = []
    files: list[str] = []
    for index in case["order"]:
        snapshot = [Transaction(corpus[p].terms, f"p{p}") for p in snapshots[index]]
        path = work / f"snapshot-{index}.json"
        items = [{"terms": sorted(t.terms), "individual": t.individual} for t in snapshot]
        path.write_text(json.dumps(items), encoding="utf-8")
        files.append(str(path))
        started = time.perf_counter()
        publication = publish("sanony", history, snapshot, private, params)
        seconds = round(time.perf_counter() - started, 3)
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
        inproc = work / "inproc"
        inproc.mkdir(exist_ok=True)
        document = release_document(
            publication.release, "segen", "sanony", params.for_method("sanony")
        )
        name = f"release-{publication.release.release_no:03d}.json"
        (inproc / name).write_text(json.dumps(document), encoding="utf-8")
        report = publication.report
        copies = report["private_copies"]
        escalation = report.get("escalation")
        entry: dict[str, Any] = {
            "release_no": publication.release.release_no,
            "snapshot": index,
            "rows": publication.release.n_rows,
            "counterfeits": publication.ledger.counterfeit_rows,
            "counterfeit_rate": report["counterfeit_rate"],
            "private_copies_true": copies["true"],
            "private_copies_published": copies["published"],
            "distortion": copies["distortion"],
            "net": copies["net"],
            "terms_off": copies["terms_off"],
            "suppressed": sum(publication.ledger.suppressed.values()),
            "clusters": report["clusters"],
            "escalated": escalation is not None,
            "seconds": seconds,
        }
        if escalation is not None:
            beyond = escalation["suppressed_beyond_budget"]
            entry["escalation"] = {
                "step": escalation["steps"][-1]["step"],
                "merge": escalation["steps"][-1]["merge"],
                "steps_tried": len(escalation["steps"]) - 1,
                "refused_at_first": escalation["steps"][0].get("rows_over_threshold"),
                "coarser_rows_over": [
                    s.get("rows_over_threshold")
                    for s in escalation["steps"]
                    if s["step"] == "coarser_clusters"
                ],
                "clusters_before": escalation["clusters_before"],
                "clusters_after": escalation["clusters_after"],
                "suppressed_beyond_budget": beyond,
                "beyond_copies": sum(beyond.values()),
            }
        releases.append(entry)
    if not local:
        over, worst = judge(inproc)
        return {**case, "releases": releases, "judge_rows_over_r_th": over, "judge_worst": worst}
    private_file = work / "private.txt"
    private_file.write_text("\n".join(sorted(private)), encoding="utf-8")
    out = work / "releases"
    local = subprocess.run(
        [
            sys.executable,
            "-m",
            "app",
            "publish-local",
            *files,
            "--out",
            str(out),
            "--private-file",
            str(private_file),
            "--params",
            json.dumps({"r_th": r_th, "seed": seed}),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    over, worst = judge(out)
    published = sorted(out.glob("release-*.json"))
    agree = len(published) == len(releases) and all(
        json.loads(p.read_text(encoding="utf-8"))["release_no"] == r["release_no"]
        and sum(len(c["rows"]) for c in json.loads(p.read_text(encoding="utf-8"))["clusters"])
        == r["rows"]
        for p, r in zip(published, releases, strict=False)
    )
    return {
        **case,
        "releases": releases,
        "publish_local_rc": local.returncode,
        "publish_local_agrees": agree,
        "judge_rows_over_r_th": over,
        "judge_worst": worst,
    }


def judge(folder: Path) -> tuple[int | None, list[str]]:
    """Rows over r_th by the auditors' reference judge, and its five riskiest rows."""
    judged = subprocess.run(
        [sys.executable, str(JUDGE), str(folder), "--worst", "5"],
        capture_output=True,
        text=True,
        check=False,
    )
    lines = judged.stdout.strip().splitlines()
    last = lines[-1] if lines else ""
    over = int(last.rsplit(":", 1)[1]) if last.startswith("rows over r_th in the series") else None
    return over, [line.strip() for line in lines if line.startswith("  ")]


def all_orders(corpus: list[Transaction]) -> dict[str, Any]:
    """The 800-row series in all 120 orders of its five snapshots (in process, judged)."""
    escalated: list[dict[str, Any]] = []
    over = 0
    releases = 0
    for order in itertools.permutations(range(5)):
        case = {"size": 800, "rep": 0.5, "r_th": 8.0, "seed": 9, "order": list(order)}
        with tempfile.TemporaryDirectory() as folder:
            result = run_case(case, corpus, Path(folder), local=False)
        releases += len(result["releases"])
        over += result["judge_rows_over_r_th"] or 0
        for r in result["releases"]:
            if r["escalated"]:
                escalated.append(
                    {
                        "order": list(order),
                        "release_no": r["release_no"],
                        "snapshot": r["snapshot"],
                        "distortion": r["distortion"],
                        "counterfeit_rate": r["counterfeit_rate"],
                        **r["escalation"],
                    }
                )
    return {
        "orders": 120,
        "releases_published": releases,
        "orders_escalating": len({tuple(e["order"]) for e in escalated}),
        "releases_escalated": escalated,
        "judge_rows_over_r_th": over,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--results", type=Path, default=Path("escalation.json"))
    parser.add_argument("--all-orders", action="store_true", help="also all 120 orders")
    args = parser.parse_args()
    corpus = read_corpus(DATA / "bms-webview-1.dat")
    results = []
    for case in cases():
        with tempfile.TemporaryDirectory() as folder:
            result = run_case(case, corpus, Path(folder))
        results.append(result)
        escalated = [
            (r["release_no"], r["escalation"]["step"], r["escalation"]["beyond_copies"])
            for r in result["releases"]
            if r["escalated"]
        ]
        print(
            f"r_th {case['r_th']} seed {case['seed']} order {case['order']}: "
            f"{len(result['releases'])} published, escalated {escalated}, "
            f"judge {result['judge_rows_over_r_th']}, publish-local agrees "
            f"{result['publish_local_agrees']}",
            flush=True,
        )
    document: dict[str, Any] = {"series": results}
    if args.all_orders:
        document["all_orders"] = all_orders(corpus)
        summary = {k: v for k, v in document["all_orders"].items() if k != "releases_escalated"}
        print(f"all orders: {summary}", flush=True)
    args.results.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

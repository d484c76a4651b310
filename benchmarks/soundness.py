"""Soundness against the paper's adversary: SeGen series published and judged.

Publishes SeGen series of BMS-WebView-1 or -2 with a method, writes each release as the public
JSON of docs/api.md (so that the auditors' reference judge can be run on it: ``python
../shared/auditor/judge.py OUT``), and reports per release: rows, counterfeit rate, suppressed
copies, the service's own rows over ``r_th`` and maximum serial risk, and the publish time.
With ``--grid`` it runs the evaluation grid (the defaults, then sz, rep and r_th one at a
time, several seeds), runs the judge on every series when ``../shared/auditor/judge.py`` is
there, and writes one JSON line per series to ``--results``.

    python -m benchmarks.soundness --corpus 2 --size 3875 --releases 5 --out /tmp/b2
    python -m benchmarks.soundness --grid --results grid.jsonl
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from app.core.errors import CoreError
from app.core.history import SeriesHistory
from app.core.model import Transaction
from app.core.params import parse_params
from app.core.pipeline import publish
from app.core.risk.assess import assess_series
from app.core.segen import choose_private_terms, segen
from app.io.corpora import corpora_dir
from app.io.corpus import read_corpus
from app.io.public import release_document
from benchmarks.auditor import JUDGE

DATA = corpora_dir()
SIZES = {1: 59_602, 2: 77_512}  # transactions in BMS-WebView-1 and -2


def publish_series(
    corpus_no: int,
    sz: float,
    rep: float,
    r_th: float,
    seed: int,
    releases: int = 5,
    method: str = "sanony",
    extra: dict[str, Any] | None = None,
    out: Path | None = None,
) -> dict[str, Any]:
    """Publish one SeGen series; per-release figures, and the failure if one was refused."""
    corpus = read_corpus(DATA / f"bms-webview-{corpus_no}.dat")
    private = choose_private_terms([t for tr in corpus for t in tr.terms], 0.1, seed=seed)
    params = parse_params(method, {"r_th": r_th, "seed": seed, **(extra or {})})
    history = SeriesHistory()
    rows: list[dict[str, Any]] = []
    failure = None
    size = round(sz * len(corpus))
    for positions in segen(len(corpus), size, releases, rep, seed=seed):
        snapshot = [Transaction(corpus[p].terms, f"p{p}") for p in positions]
        started = time.perf_counter()
        try:
            publication = publish(method, history, snapshot, private, params)
        except CoreError as exc:
            failure = {"release_no": history.next_release_no, "message": exc.message}
            break
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
        copies = sum(len(t.terms & private) for t in snapshot)
        rows.append(
            {
                "release_no": publication.release.release_no,
                "rows": publication.release.n_rows,
                "counterfeits": publication.ledger.counterfeit_rows,
                "suppressed": sum(publication.ledger.suppressed.values()),
                "private_copies": copies,
                "seconds": round(time.perf_counter() - started, 3),
                "by_phase": publication.report.get("counterfeits_by_phase", {}),
                # In copies, what analysts read: L1 distortion, net, terms off.
                "copies": publication.report.get("private_copies", {}),
            }
        )
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            document = release_document(
                publication.release, "segen", method, params.for_method(method)
            )
            name = f"release-{publication.release.release_no:03d}.json"
            (out / name).write_text(json.dumps(document), encoding="utf-8")
    for row, risk in zip(rows, assess_series(history.releases, r_th, with_rows=False), strict=True):
        row["rows_over_r_th"] = risk.rows_over_threshold
        row["max_serial_risk"] = round(risk.max_serial_risk, 6)
    return {"releases": rows, "failure": failure}


def judge(folder: Path) -> int | None:
    """Rows over r_th by the auditors' reference judge, or None when it is not at hand."""
    if not JUDGE.exists():
        return None
    done = subprocess.run(
        [sys.executable, str(JUDGE), str(folder)], capture_output=True, text=True, check=False
    )
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    return int(last.rsplit(":", 1)[1]) if last.startswith("rows over r_th in the series") else None


def grid(seeds: int) -> Iterator[tuple[int, float, float, float, int]]:
    """The evaluation grid: defaults, then sz, rep and r_th one at a time (design.md §10)."""
    default = (0.05, 0.4, 8.0)
    settings = [default]
    settings += [(sz, 0.4, 8.0) for sz in (0.0125, 0.025, 0.1)]
    settings += [(0.05, rep, 8.0) for rep in (0.1, 0.2, 0.8)]
    settings += [(0.05, 0.4, r_th) for r_th in (2.0, 4.0, 16.0)]
    for corpus_no in (1, 2):
        for sz, rep, r_th in settings:
            for seed in range(1, seeds + 1):
                yield corpus_no, sz, rep, r_th, seed


def _print(result: dict[str, Any]) -> None:
    for row in result["releases"]:
        print(
            f"release {row['release_no']}: {row['rows']} rows, counterfeits {row['counterfeits']}"
            f" ({row['counterfeits'] / max(row['rows'], 1):.2%}), suppressed {row['suppressed']}"
            f" of {row['private_copies']} copies, rows over r_th {row['rows_over_r_th']}, "
            f"max risk {row['max_serial_risk']:.4f}, {row['seconds']} s, {row['by_phase']}, "
            f"copies off {row['copies'].get('distortion', 0):.2%} "
            f"(net {row['copies'].get('net', 0):+.2%}, {row['copies'].get('terms_off', 0)} terms)"
        )
    if result["failure"]:
        print(f"release {result['failure']['release_no']}: FAILED {result['failure']['message']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--corpus", type=int, choices=(1, 2), default=2)
    parser.add_argument("--size", type=int, default=3876, help="rows per release")
    parser.add_argument("--releases", type=int, default=5)
    parser.add_argument("--rep", type=float, default=0.4)
    parser.add_argument("--r-th", type=float, default=8.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--method", default="sanony")
    parser.add_argument("--params", default="{}", help="extra method parameters as JSON")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--grid", action="store_true", help="run the evaluation grid")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--results", type=Path, default=Path("soundness-grid.jsonl"))
    args = parser.parse_args()
    extra = json.loads(args.params)
    if not args.grid:
        sz = args.size / SIZES[args.corpus]
        _print(
            publish_series(
                args.corpus,
                sz,
                args.rep,
                args.r_th,
                args.seed,
                args.releases,
                args.method,
                extra,
                args.out,
            )
        )
        return
    with args.results.open("a", encoding="utf-8") as sink:
        for corpus_no, sz, rep, r_th, seed in grid(args.seeds):
            with tempfile.TemporaryDirectory() as folder:
                result = publish_series(
                    corpus_no, sz, rep, r_th, seed, args.releases, args.method, extra, Path(folder)
                )
                result["judge_rows_over_r_th"] = judge(Path(folder))
            result.update(
                corpus=corpus_no,
                sz=sz,
                rep=rep,
                r_th=r_th,
                seed=seed,
                method=args.method,
                params=extra,
            )
            sink.write(json.dumps(result) + "\n")
            sink.flush()
            cf = sum(r["counterfeits"] for r in result["releases"])
            n = sum(r["rows"] for r in result["releases"])
            print(
                f"B{corpus_no} sz {sz:.4f} rep {rep} r_th {r_th} seed {seed}: "
                f"{len(result['releases'])} published, counterfeits {cf / max(n, 1):.2%}, "
                f"judge {result['judge_rows_over_r_th']}, failure {result['failure']}",
                flush=True,
            )


if __name__ == "__main__":
    main()

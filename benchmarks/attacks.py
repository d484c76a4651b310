"""The semantic attack measured (design.md §11): against disassociation and against the
Anony-style releases of every other method, with the counterfeit-detection AUC and the speed
of the attack against that of publication. Writes ``benchmarks/results/attacks.json``, the
figures under ``docs/figures/`` and the results section of ``docs/attacks.md`` (between its
``<!-- results -->`` markers; the prose around them is kept).

    python -m benchmarks.attacks                     # the full run (about 20 min, 1 core)
    python -m benchmarks.attacks --quick             # small sizes, a smoke test
    python -m benchmarks.attacks --parts disassociation --ks 5 --ms 2

Corpora (``benchmarks/attack_data.py``): the gensim wheel's Lee news corpus (sentences) and
BMS-WebView-1/-2 read in place from ``--data`` (default ``SERIALPUB_CORPORA_DIR``; never
copied into the repository).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from app.io.corpora import corpora_dir
from app.io.corpus import read_corpus
from benchmarks.attack_data import load
from benchmarks.attack_report import figures, markdown
from benchmarks.attack_runs import (
    ANONY_METHODS,
    anony_style,
    disassociation,
    scorers,
    spread,
    timing,
)

REPO = Path(__file__).resolve().parents[1]
MARK_START, MARK_END = "<!-- results -->", "<!-- /results -->"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=corpora_dir())
    p.add_argument("--parts", nargs="+", default=["disassociation", "spread", "anony", "timing"])
    p.add_argument("--spread-seeds", type=int, default=10)
    p.add_argument("--text", nargs="+", default=["LEE"], help="text corpora (LEE, WIKI)")
    p.add_argument("--clicks", nargs="+", default=["B1"], help="click-stream corpora (B1, B2)")
    p.add_argument("--ks", nargs="+", type=int, default=[2, 3, 4, 5, 6, 8, 10])
    p.add_argument("--ms", nargs="+", type=int, default=[2, 3])
    p.add_argument("--limit", type=int, default=3000, help="records disassociated")
    p.add_argument("--methods", nargs="+", default=list(ANONY_METHODS))
    p.add_argument("--text-size", type=int, default=500, help="rows per text release")
    p.add_argument("--click-size", type=int, default=3000, help="rows per click release")
    p.add_argument("--releases", type=int, default=3)
    p.add_argument("--timing-rows", type=int, default=50_000)
    p.add_argument("--vpa-budget", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "attacks.json")
    p.add_argument("--doc", type=Path, default=REPO / "docs" / "attacks.md")
    return p


def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.quick:
        args.ks, args.ms, args.limit = [3, 5], [2], 400
        args.text_size, args.click_size, args.timing_rows = 200, 500, 5000
        args.spread_seeds = 3
    results: dict[str, Any] = {"disassociation": [], "spread": [], "anony": [], "timing": None}
    results["command"] = "python -m benchmarks.attacks " + shlex.join(sys.argv[1:])
    results["seed"] = args.seed
    results["when"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    results["scorer_seconds"] = {}
    for name in args.text + args.clicks:
        corpus = load(name, args.data)
        scoring, seconds = scorers(corpus, args.seed)
        results["scorer_seconds"][name] = seconds
        if "disassociation" in args.parts and corpus.has_meaning:
            print(f"disassociation of {name}", flush=True)
            results["disassociation"] += disassociation(
                corpus, scoring, args.ks, args.ms, args.limit, args.seed, args.vpa_budget
            )
        if "spread" in args.parts and corpus.has_meaning:
            print(f"spread over seeds, {name}", flush=True)
            seeds = range(args.spread_seeds)
            results["spread"] += spread(corpus, scoring, 5, 2, seeds)
        if "anony" in args.parts:
            size = args.text_size if corpus.has_meaning else args.click_size
            print(f"anony-style releases of {name}", flush=True)
            results["anony"] += anony_style(
                corpus, scoring, args.methods, size, args.releases, args.seed
            )
    if "timing" in args.parts:
        print("timing", flush=True)
        corpus_b2 = read_corpus(args.data / "bms-webview-2.dat")
        results["timing"] = timing(corpus_b2, args.timing_rows, args.seed)
    return results


def write_doc(doc: Path, section: str) -> None:
    """Replace the results section of ``doc`` (created with just the section if missing)."""
    text = doc.read_text(encoding="utf-8") if doc.exists() else f"{MARK_START}\n{MARK_END}\n"
    head, rest = text.split(MARK_START, 1)
    tail = rest.split(MARK_END, 1)[1]
    doc.write_text(f"{head}{MARK_START}\n{section}\n{MARK_END}{tail}", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    results = run(args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1, default=str), encoding="utf-8")
    results["figures"] = figures(results, args.doc.parent / "figures")
    write_doc(args.doc, markdown(results))
    print(f"wrote {args.out}, {args.doc} and {len(results['figures'])} figures")
    return 1 if any("error" in r for r in results["anony"]) else 0


if __name__ == "__main__":
    raise SystemExit(main())

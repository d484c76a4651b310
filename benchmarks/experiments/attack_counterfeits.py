"""Can the semantic adversary tell Sanony's counterfeits from true rows?

Publishes a SeGen series (3 releases, rep 40%, as ``benchmarks/attacks.py``) with Sanony for
several seeds on each corpus, and measures on the last release the counterfeit-detection
AUC of every detector of :func:`app.core.attacks.counterfeit_auc` (coherence by NGD and by
skip-gram embeddings learnt from the background part, row size, size within the cluster,
near duplicates, uniqueness). Few counterfeits per release make one seed's AUC noisy, so it
reports the median over seeds and the AUC of all seeds' rows pooled, and the counterfeit
rate. ``--json`` keeps every number (the before/after table of ``docs/attacks.md`` is built
from two such files).

    python -m benchmarks.experiments.attack_counterfeits --seeds 7 --json after.json
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

import numpy as np

from app.core.attacks import counterfeit_auc, row_coherence, row_sources
from app.core.attacks.anony_measures import auc
from app.core.segen import choose_private_terms
from app.io.corpora import corpora_dir
from benchmarks.attack_data import load
from benchmarks.attack_runs import _series, scorers

REPO = Path(__file__).resolve().parents[2]
DETECTORS = (
    "all_rows",
    "multi_term_rows",
    "row_size",
    "row_size_either",
    "size_in_cluster",
    "nearest_row",
    "unique_in_cluster",
)


def _pooled(parts: list[tuple[list[bool], list[float]]], flip: bool) -> float:
    """AUC over every seed's rows together (low score = suspect); ``flip``: either direction."""
    labels = np.array([f for fake, _ in parts for f in fake], dtype=np.bool_)
    scores = np.array([v for _, vals in parts for v in vals], dtype=np.float64)
    keep = ~np.isnan(scores)
    value = auc(list(-scores[keep & labels]), list(-scores[keep & ~labels]))
    return max(value, 1 - value) if flip else value


def run(corpus_name: str, data: Path, seeds: int, size: int, releases: int) -> dict[str, Any]:
    corpus = load(corpus_name, data)
    scoring, _ = scorers(corpus, 0)
    vocabulary = sorted({t for record in corpus.published for t in record.terms})
    per_seed: list[dict[str, Any]] = []
    pooled: dict[str, list[tuple[list[bool], list[float]]]] = {"ngd": [], "we": [], "size": []}
    for seed in range(seeds):
        private = choose_private_terms(vocabulary, 0.1, seed)
        raw, release, ledger, _ = _series("sanony", corpus, private, size, releases, seed)
        sources = row_sources(raw, release, ledger)
        fake = [src is None for srcs in sources for src in srcs]
        row: dict[str, Any] = {
            "seed": seed,
            "rows": release.n_rows,
            "counterfeits": ledger.counterfeit_rows,
            "rate": ledger.counterfeit_rows / max(release.n_rows, 1),
        }
        for name, rel in scoring.items():
            coherence = row_coherence(release, rel)
            areas = counterfeit_auc(sources, coherence, release)
            row[name] = {d: areas[d] for d in DETECTORS}
            values = [v for c in coherence for v in c]
            pooled[name].append((fake, values))
        sizes = [float(len(r)) for c in release.clusters for r in c.rows]
        pooled["size"].append((fake, sizes))
        per_seed.append(row)
        print(f"{corpus_name} seed {seed}: {json.dumps(row)}", flush=True)
    summary: dict[str, Any] = {
        "corpus": corpus_name,
        "seeds": seeds,
        "rows_per_release": size,
        "counterfeits": sum(r["counterfeits"] for r in per_seed),
        "rate_median": statistics.median(r["rate"] for r in per_seed),
        "pooled": {
            "coherence_ngd": _pooled(pooled["ngd"], False),
            "coherence_we": _pooled(pooled["we"], False),
            "row_size": _pooled(pooled["size"], False),
            "row_size_either": _pooled(pooled["size"], True),
        },
        "median": {},
        "per_seed": per_seed,
    }
    for name in scoring:
        summary["median"][name] = {
            d: statistics.median(
                r[name][d]
                for r in per_seed
                if r[name][d] == r[name][d]  # nan-free
            )
            if any(r[name][d] == r[name][d] for r in per_seed)
            else float("nan")
            for d in DETECTORS
        }
    return summary


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--data", type=Path, default=corpora_dir())
    p.add_argument("--corpora", nargs="+", default=["LEE", "B1"])
    p.add_argument("--seeds", type=int, default=7)
    p.add_argument("--text-size", type=int, default=500)
    p.add_argument("--click-size", type=int, default=3000)
    p.add_argument("--releases", type=int, default=3)
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    out = []
    for name in args.corpora:
        size = args.text_size if name in ("LEE", "WIKI") else args.click_size
        summary = run(name, args.data, args.seeds, size, args.releases)
        out.append(summary)
        print(json.dumps({k: v for k, v in summary.items() if k != "per_seed"}, indent=1))
    if args.json is not None:
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

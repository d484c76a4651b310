"""Counterfeits that stand out: the frequency detector on SeGen series.

Publishes (or reuses, under ``--work``) Sanony series of BMS-WebView-1 (3 x 3,000, the first
three releases of each 5 x 3,000 series, and 5 x 3,000) and BMS-WebView-2 (5 x 5,000), r_th
8, rep 40%, with :mod:`benchmarks.frequency_series` (publish-local's layout), reads them back
as an auditor would, and reports per release:

- the counterfeit-detection AUC of each feature of :mod:`app.core.attacks.frequency`, of the
  unsupervised ``rarity`` score, of the logistic model cross-validated within the series by
  cluster, without and with the published counts, and of ``transfer``: the same logistic
  model (with counts) trained on the OTHER series of the same corpus and applied to this
  one, which an adversary could do with series it published itself;
- the top-k precision (k = published counterfeits per cluster) against chance;
- the paper's serial risk (rows over r_th, max), and the same after each adversary's
  discount (:mod:`app.core.attacks.frequency_risk`): ``blind`` (k random rows per cluster),
  ``detector`` (rarity), ``transfer``, and from the ledger ``control`` (k true rows per
  cluster at random: what removal alone does) and ``perfect`` (every counterfeit removed).

    python -m benchmarks.frequency_detector --work /tmp/fd --counts cluster release paper \\
        --counterfeits blend --json /tmp/blend.json
    python -m benchmarks.frequency_detector --work /tmp/fd --counts cluster release \\
        --counterfeits fresh --json /tmp/fresh.json

(``benchmarks/results/frequency_detector.json`` holds both lists, one after the other.)

A margin: publish at a lower r_th and audit at 8, on the default seeds and on seeds nobody
tuned to (``benchmarks/results/frequency_margin.json``)::

    python -m benchmarks.frequency_detector --work /tmp/fd --counts paper release \
        --counterfeits blend --publish-r-th 7.2 --json /tmp/margin.json
    python -m benchmarks.frequency_detector --work /tmp/fd --counts paper \
        --counterfeits blend --publish-r-th 7.2 --seeds 4 5 6 --json /tmp/margin456.json
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from app.core.attacks.frequency import (
    SeriesCounts,
    counterfeit_labels,
    detection_report,
    rarity_score,
    row_features,
)
from app.core.attacks.frequency_risk import discounted_risks, logistic_odds
from app.core.attacks.mixture_risk import DEFAULT_DRAWS, mixture_risks
from app.core.model import PublishedRelease, ReleaseLedger
from app.core.risk.assess import assess_series
from app.io.ledger import default_ledger_dir, read_ledger, read_release
from benchmarks.frequency_series import build_series

R_TH = 8.0
#: (name, corpus, rows per release, releases published, releases read, seeds)
SERIES = (
    ("B1 3x3000", 1, 3000, 5, 3, (1, 2, 3)),
    ("B1 5x3000", 1, 3000, 5, 5, (1, 2, 3)),
    ("B2 5x5000", 2, 5000, 5, 5, (1, 2, 3)),
)

Series = tuple[list[PublishedRelease], list[ReleaseLedger]]


def read_series(folder: Path, count: int) -> Series:
    """The first ``count`` public releases of ``folder`` and their ledgers."""
    releases, ledgers = [], []
    for number in range(1, count + 1):
        name = f"{number:03d}.json"
        public = json.loads((folder / f"release-{name}").read_text(encoding="utf-8"))
        ledger = default_ledger_dir(folder) / f"ledger-{name}"
        private = json.loads(ledger.read_text(encoding="utf-8"))
        releases.append(read_release(public))
        ledgers.append(read_ledger(private)[0])
    return releases, ledgers


def _table(series: Series) -> tuple[list[np.ndarray], list[np.ndarray]]:
    releases, ledgers = series
    counts = SeriesCounts.of(releases)
    features = [row_features(releases, j, counts) for j in range(len(releases))]
    labels = [counterfeit_labels(r, led) for r, led in zip(releases, ledgers, strict=True)]
    return features, labels


def _transfer(train: list[tuple[list[np.ndarray], list[np.ndarray]]]) -> Any:
    """The logistic model (all features, counts included) fitted on other series' rows."""
    x = np.vstack([f for features, _ in train for f in features])
    y = np.concatenate([lab for _, labels in train for lab in labels])
    model = make_pipeline(
        StandardScaler(), LogisticRegression(class_weight="balanced", max_iter=1000)
    )
    return model.fit(x, y)


def _auc(labels: np.ndarray, scores: np.ndarray) -> float | None:
    if labels.all() or not labels.any():
        return None
    return round(float(roc_auc_score(labels, scores)), 4)


def _round(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _round(v) for k, v in value.items()}
    if isinstance(value, float):
        return None if value != value else round(value, 4)
    return value


def evaluate(
    series: Series, tables: Any, model: Any, seed: int, draws: int = DEFAULT_DRAWS
) -> list[dict[str, Any]]:
    """Per release: AUCs, top-k precision, the paper's risk, each discounted risk and the
    Bayesian adversary's (``mixture``: blind, the in-series cross-validated ``logistic`` and
    ``transfer``, each ``[rows over, rows surely over, max]``)."""
    releases, ledgers = series
    features, labels = tables
    transfer = [model.predict_proba(f)[:, 1] for f in features]
    scores = {
        "detector": [rarity_score(f) for f in features],
        "transfer": transfer,
    }
    started = time.perf_counter()
    discounted = discounted_risks(releases, scores, R_TH, seed, labels)
    risk_seconds = time.perf_counter() - started
    started = time.perf_counter()
    weights = {
        **logistic_odds(releases, features, labels, seed),
        "transfer": [p / np.maximum(1.0 - p, 1e-12) for p in transfer],
    }
    mixture = mixture_risks(releases, weights, R_TH, draws, seed) if draws else {}
    mixture_seconds = time.perf_counter() - started
    paper = assess_series(releases, R_TH, with_rows=False)
    detection = detection_report(releases, list(enumerate(ledgers)), seed)
    out = []
    for j, entry in enumerate(detection):
        risk = {"paper": [paper[j].rows_over_threshold, round(paper[j].max_serial_risk, 3)]}
        for name, per_release in discounted.items():
            r = per_release[j]
            risk[name] = [r["rows_over_threshold"], round(r["max_serial_risk"], 3)]
        out.append(
            _round(
                {
                    "release_no": entry["release_no"],
                    "rows": entry["rows"],
                    "counterfeits": entry["counterfeits"],
                    "auc": {**entry["auc"], "transfer": _auc(labels[j], transfer[j])},
                    "top_k": entry["top_k"],
                    "pooled": entry["pooled"],
                    "risk": risk,
                    "risk_seconds": risk_seconds,
                    "mixture": {
                        name: [
                            per[j]["rows_over_threshold"],
                            per[j]["rows_surely_over"],
                            round(per[j]["max_serial_risk"], 3),
                        ]
                        for name, per in mixture.items()
                    },
                    "mixture_seconds": mixture_seconds,
                }
            )
        )
    return out


def run(
    work: Path,
    counterfeits: str = "blend",
    draws: int = DEFAULT_DRAWS,
    counts: str = "cluster",
    publish_r_th: float = R_TH,
    only_seeds: tuple[int, ...] | None = None,
) -> list[dict[str, Any]]:
    """Every series of :data:`SERIES` with Sanony's ``counterfeits`` and
    ``counterfeit_counts`` (``counts``), published at ``publish_r_th`` (a margin under the
    audited :data:`R_TH` when lower) and scored by :func:`evaluate` at :data:`R_TH`;
    ``only_seeds`` replaces the seeds of :data:`SERIES` (series nobody tuned to)."""
    suffix = "" if counts == "cluster" else f"-{counts}"
    if publish_r_th != R_TH:
        suffix += f"-rth{publish_r_th:g}"
    results = []
    for name, corpus, size, published, count, default_seeds in SERIES:
        seeds = only_seeds or default_seeds
        loaded = {}
        for seed in seeds:
            folder = build_series(
                corpus,
                size,
                published,
                seed,
                work / f"b{corpus}-5x{size}-s{seed}-{counterfeits}{suffix}",
                r_th=publish_r_th,
                counterfeits=counterfeits,
                counterfeit_counts=counts,
            )
            loaded[seed] = read_series(folder, count)
        tables = {seed: _table(s) for seed, s in loaded.items()}
        for seed in seeds:
            model = _transfer([tables[other] for other in seeds if other != seed])
            releases = evaluate(loaded[seed], tables[seed], model, seed, draws)
            results.append(
                {
                    "series": name,
                    "seed": seed,
                    "r_th": R_TH,
                    "published_at_r_th": publish_r_th,
                    "counterfeits": counterfeits,
                    "counterfeit_counts": counts,
                    "releases": releases,
                }
            )
            for r in releases:
                a = r["auc"]
                print(
                    f"{name} {counterfeits} {counts} seed {seed} r{r['release_no']}: "
                    f"{r['counterfeits']} cf, rarity "
                    f"{a['rarity']}, logistic {a['logistic']}, +counts "
                    f"{a['logistic_with_counts']}, transfer {a['transfer']}, risk {r['risk']}, "
                    f"mixture {r['mixture']}",
                    flush=True,
                )
    return results


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--work", type=Path, default=None, help="where series are published/reused")
    p.add_argument("--json", type=Path, default=None)
    p.add_argument(
        "--counterfeits",
        nargs="+",
        choices=("blend", "fresh"),
        default=["blend", "fresh"],
        help="Sanony's counterfeits parameter: each mode's series are published and scored",
    )
    p.add_argument(
        "--counts",
        nargs="+",
        choices=("cluster", "release", "paper"),
        default=["cluster"],
        help="Sanony's counterfeit_counts: each value's series are published and scored",
    )
    p.add_argument(
        "--draws",
        type=int,
        default=DEFAULT_DRAWS,
        help="hypotheses per Bayesian adversary (0: none)",
    )
    p.add_argument(
        "--publish-r-th",
        type=float,
        default=R_TH,
        help=f"r_th the series are published at; the audit stays at {R_TH:g} (a margin)",
    )
    p.add_argument(
        "--seeds", type=int, nargs="+", default=None, help="seeds instead of 1-3 per corpus"
    )
    args = p.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        for counts in args.counts:
            for mode in args.counterfeits:
                results += run(
                    args.work or Path(scratch),
                    mode,
                    args.draws,
                    counts,
                    args.publish_r_th,
                    tuple(args.seeds) if args.seeds else None,
                )
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Can counterfeits be told from true rows by how rare their set is?

Publishes one SeGen series per setting with Sanony, once per ``counterfeits`` mode (``fresh``:
Definition 14's sets no release holds; ``blend``, the default: twins of true rows matched to
the true rows' rarity), and scores, per release and pooled, detectors an adversary builds from
the public releases alone (the private ledgers only label the rows):

- ``series``: fewer copies of the row's set across every release (rarer = more suspect);
- ``release``: fewer copies within its own release;
- ``elsewhere``: no other release holds the set;
- ``length``: the row's number of terms (either direction: the AUC is folded to >= 0.5);
- ``logit``: a logistic regression on log copies (series, release, cluster), ``elsewhere``
  and length, 5-fold cross-validated with whole clusters held out (scikit-learn);
- ``logit_counts``: the same plus the cluster's published counterfeit count over its size.

It also prints the cost: counterfeit rows, the L1 distortion of the private copies, the rows
over ``r_th`` by the project's own assessment (0 is the guarantee) and publish seconds.

    python -m benchmarks.experiments.counterfeit_rarity --corpus 1 --size 3000 --releases 5 \\
        --seeds 1 3
    python -m benchmarks.experiments.counterfeit_rarity --corpus 2 --size 5000 --json out.json
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold, cross_val_predict

from app.core.history import SeriesHistory
from app.core.model import PublishedRelease, ReleaseLedger, Transaction
from app.core.params import parse_params
from app.core.pipeline import publish
from app.core.risk.assess import assess_series
from app.core.segen import choose_private_terms, segen
from app.io.corpus import read_corpus
from benchmarks.soundness import DATA

MODES = ("fresh", "blend")
#: Feature columns: log copies in the series, release, cluster; held elsewhere; length;
#: published counterfeits over the cluster's size.
COLUMNS = ("series", "release", "cluster", "elsewhere", "length", "counts")


def _auc(labels: np.ndarray, scores: np.ndarray, fold: bool = False) -> float | None:
    if labels.all() or not labels.any():
        return None
    value = float(roc_auc_score(labels, scores))
    return round(max(value, 1 - value) if fold else value, 3)


def features(
    releases: list[PublishedRelease], ledgers: list[ReleaseLedger]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(features per row, counterfeit labels, cluster groups, release index per row)."""
    per_release = [Counter(r for c in rel.clusters for r in c.rows) for rel in releases]
    series: Counter[tuple[str, ...]] = Counter()
    for counts in per_release:
        series.update(counts)
    rows, labels, groups, index = [], [], [], []
    for k, (release, ledger) in enumerate(zip(releases, ledgers, strict=True)):
        for c, (cluster, led) in enumerate(zip(release.clusters, ledger.clusters, strict=True)):
            fake = set(led.counterfeit_rows)
            in_cluster = Counter(cluster.rows)
            share = cluster.counterfeits / max(len(cluster.rows), 1)
            for position, row in enumerate(cluster.rows):
                elsewhere = series[row] > per_release[k][row]
                rows.append(
                    [
                        math.log(series[row]),
                        math.log(per_release[k][row]),
                        math.log(in_cluster[row]),
                        float(elsewhere),
                        float(len(row)),
                        share,
                    ]
                )
                labels.append(position in fake)
                groups.append(k * 1_000_000 + c)
                index.append(k)
    return np.array(rows), np.array(labels), np.array(groups), np.array(index)


def _logit(x: np.ndarray, labels: np.ndarray, groups: np.ndarray) -> np.ndarray:
    model = LogisticRegression(max_iter=2000)
    folds = GroupKFold(n_splits=5)
    return cross_val_predict(model, x, labels, cv=folds, groups=groups, method="predict_proba")[
        :, 1
    ]


def score(releases: list[PublishedRelease], ledgers: list[ReleaseLedger]) -> dict[str, Any]:
    x, labels, groups, index = features(releases, ledgers)
    per_release = []
    for k in range(len(releases)):
        mask = index == k
        lab = labels[mask]
        per_release.append(
            {
                "release_no": releases[k].release_no,
                "counterfeits": int(lab.sum()),
                "series": _auc(lab, -x[mask, 0]),
                "release": _auc(lab, -x[mask, 1]),
                "elsewhere": _auc(lab, -x[mask, 3]),
                "length": _auc(lab, x[mask, 4], fold=True),
                "unique_share": {
                    "counterfeit": round(float((x[mask & labels, 0] == 0).mean()), 3)
                    if lab.any()
                    else None,
                    "true": round(float((x[mask & ~labels, 0] == 0).mean()), 3),
                },
            }
        )
    pooled: dict[str, float | None] = {"series": _auc(labels, -x[:, 0])}
    if labels.sum() >= 10:
        pooled["logit"] = _auc(labels, _logit(x[:, :5], labels, groups))
        pooled["logit_counts"] = _auc(labels, _logit(x, labels, groups))
    return {"releases": per_release, "pooled": pooled}


def run(
    corpus_no: int, size: int, releases: int, rep: float, r_th: float, seed: int, mode: str
) -> dict[str, Any]:
    corpus = read_corpus(DATA / f"bms-webview-{corpus_no}.dat")
    private = choose_private_terms([t for tr in corpus for t in tr.terms], 0.1, seed=seed)
    params = parse_params("sanony", {"r_th": r_th, "seed": seed, "counterfeits": mode})
    history = SeriesHistory()
    cost = []
    failure = None
    for positions in segen(len(corpus), size, releases, rep, seed=seed):
        snapshot = [Transaction(corpus[p].terms, f"p{p}") for p in positions]
        started = time.perf_counter()
        try:
            publication = publish("sanony", history, snapshot, private, params)
        except Exception as exc:  # a refusal ends the series; the rest is scored
            failure = {"release_no": history.next_release_no, "message": str(exc)[:300]}
            break
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
        copies = publication.report.get("private_copies", {})
        cost.append(
            {
                "counterfeits": publication.ledger.counterfeit_rows,
                "rows": publication.release.n_rows,
                "copies_l1": copies.get("distortion") if isinstance(copies, dict) else None,
                "seconds": round(time.perf_counter() - started, 2),
            }
        )
    risks = assess_series(history.releases, r_th, with_rows=False)
    for row, risk in zip(cost, risks, strict=True):
        row["rows_over_r_th"] = risk.rows_over_threshold
    result = score(history.releases, history.ledgers)
    for row, detail in zip(result["releases"], cost, strict=True):
        row.update(detail)
    return {
        "corpus": f"BMS-WebView-{corpus_no}",
        "size": size,
        "releases": releases,
        "rep": rep,
        "r_th": r_th,
        "seed": seed,
        "mode": mode,
        "failure": failure,
        **result,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--corpus", type=int, choices=(1, 2), default=1)
    parser.add_argument("--size", type=int, default=3000, help="rows per release")
    parser.add_argument("--releases", type=int, default=5)
    parser.add_argument("--rep", type=float, default=0.4)
    parser.add_argument("--r-th", type=float, default=8.0)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1])
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    parser.add_argument("--json", type=Path, default=None, help="append one line per run")
    args = parser.parse_args()
    for seed in args.seeds:
        for mode in args.modes:
            result = run(args.corpus, args.size, args.releases, args.rep, args.r_th, seed, mode)
            counterfeits = sum(r["counterfeits"] for r in result["releases"])
            over = sum(r["rows_over_r_th"] for r in result["releases"])
            series = [r["series"] for r in result["releases"]]
            failure = result["failure"]
            refused = f", refused at release {failure['release_no']}" if failure else ""
            print(
                f"B{args.corpus} {args.releases}x{args.size} seed {seed} {mode}: "
                f"counterfeits {counterfeits}, rows over r_th {over}, series AUC per release "
                f"{series}, pooled {result['pooled']}{refused}",
                flush=True,
            )
            if args.json is not None:
                with args.json.open("a", encoding="utf-8") as sink:
                    sink.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()

"""How low can the frequency detector go? Idealised counterfeits on published series.

The issue asks for counterfeits that the cross-validated logistic detector of
:mod:`app.core.attacks.frequency` finds with AUC <= 0.6. This benchmark measures what that
detector gives when the counterfeits of a published Sanony series (the default ``blend``)
are replaced, release by release, by idealised ones; each cluster keeps as many counterfeits
as Sanony gave it, its true rows stay as published, and the counts of later releases see the
replacements of earlier ones:

- ``real``: the counterfeits as published;
- ``anywhere``: no row changes; the labels go to random true rows anywhere in the release
  (the detector's noise level);
- ``placement``: no row changes; the labels go to random true rows *of the clusters Sanony
  put counterfeits in* (what the clusters' choice alone tells the detector: BP needs its
  counterfeits where the overlaps are, Lemma 4);
- ``twin_any``: a repeat of a random true row of the same cluster, whatever the overlaps;
- ``twin_keeps``: a repeat of a random true row of the same cluster whose set the release
  holds at least as often as every earlier release, so that no overlap moves (Lemma 4's
  condition, ``CounterfeitFactory._keeps_overlaps``); the published counterfeit when no row
  qualifies.

It also reports the single public fact behind ``twin_keeps``: the share of counterfeits and
of true rows whose set the release holds strictly more often than every other release, and
that fact's AUC as a detector on its own.

    python -m benchmarks.experiments.counterfeit_floor --work /tmp/floor \\
        --json benchmarks/experiments/results/counterfeit_floor.json
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.metrics import roc_auc_score

from app.core.attacks.frequency import detection_report
from app.core.model import ClusterLedger, PublishedRelease, ReleaseLedger, Row, release_from_counts
from benchmarks.frequency_detector import read_series
from benchmarks.frequency_series import build_series

#: (name, corpus, rows per release, releases, seed): the series of docs/attacks.md with more
#: than a handful of counterfeits per release.
SERIES = (
    ("B1 5x3000 s1", 1, 3000, 5, 1),
    ("B1 5x3000 s3", 1, 3000, 5, 3),
    ("B2 5x5000 s1", 2, 5000, 5, 1),
)
MODES = ("real", "anywhere", "placement", "twin_any", "twin_keeps")
#: Draws per randomised mode.
DRAWS = 2

#: One release's clusters as (true rows, counterfeit rows).
Split = list[tuple[list[Row], list[Row]]]
#: Chooses the counterfeits of one release: (split, the release's counts so far, earlier
#: releases' counts, rng) -> the counterfeit rows of each cluster.
Chooser = Callable[[Split, Counter[Row], list[Counter[Row]], random.Random], list[list[Row]]]


def _split(release: PublishedRelease, ledger: ReleaseLedger) -> Split:
    out = []
    for cluster, led in zip(release.clusters, ledger.clusters, strict=True):
        fake = set(led.counterfeit_rows)
        out.append(
            (
                [r for p, r in enumerate(cluster.rows) if p not in fake],
                [r for p, r in enumerate(cluster.rows) if p in fake],
            )
        )
    return out


def _twins(keep_overlaps: bool) -> Chooser:
    def choose(
        split: Split, counts: Counter[Row], earlier: list[Counter[Row]], rng: random.Random
    ) -> list[list[Row]]:
        out = []
        for true, fakes in split:
            added: list[Row] = []
            for fake in fakes:
                pool = true
                if keep_overlaps:
                    pool = [r for r in true if all(h.get(r, 0) <= counts[r] for h in earlier)]
                row = rng.choice(pool) if pool else fake
                counts[row] += 1
                added.append(row)
            out.append(added)
        return out

    return choose


def _replaced(
    releases: list[PublishedRelease], ledgers: list[ReleaseLedger], choose: Chooser, seed: int
) -> tuple[list[PublishedRelease], list[ReleaseLedger]]:
    """The series with each release's counterfeits as ``choose`` draws them."""
    rng = random.Random(seed)
    out, labels = [], []
    earlier: list[Counter[Row]] = []
    for release, ledger in zip(releases, ledgers, strict=True):
        split = _split(release, ledger)
        counts = Counter(r for true, _ in split for r in true)
        added = choose(split, counts, earlier, rng)
        clusters = []
        ledger_clusters = []
        for cluster, (true, _), extra in zip(release.clusters, split, added, strict=True):
            rows = true + extra
            clusters.append(
                (rows, cluster.private_counts, cluster.global_share, cluster.counterfeits)
            )
            ledger_clusters.append(
                ClusterLedger(counterfeit_rows=list(range(len(true), len(rows))))
            )
        out.append(
            release_from_counts(
                release.release_no, clusters, release.global_bag, release.population_rates
            )
        )
        labels.append(ReleaseLedger(ledger_clusters))
        earlier.append(Counter(r for rows, *_ in clusters for r in rows))
    return out, labels


def _relabelled(
    releases: list[PublishedRelease], ledgers: list[ReleaseLedger], in_cluster: bool, seed: int
) -> list[ReleaseLedger]:
    """Labels moved to true rows (of the same cluster, or anywhere in the release); no row
    changes."""
    rng = random.Random(seed)
    out = []
    for release, ledger in zip(releases, ledgers, strict=True):
        fake = [set(led.counterfeit_rows) for led in ledger.clusters]
        true = [
            (c, p)
            for c, cluster in enumerate(release.clusters)
            for p in range(len(cluster.rows))
            if p not in fake[c]
        ]
        chosen: list[set[int]] = [set() for _ in release.clusters]
        if in_cluster:
            for c, positions in enumerate(fake):
                pool = [p for cc, p in true if cc == c]
                chosen[c] = set(rng.sample(pool, min(len(positions), len(pool))))
        else:
            for c, p in rng.sample(true, min(sum(map(len, fake)), len(true))):
                chosen[c].add(p)
        out.append(ReleaseLedger([ClusterLedger(counterfeit_rows=sorted(c)) for c in chosen]))
    return out


def _pooled(releases: list[PublishedRelease], ledgers: list[ReleaseLedger]) -> dict[str, float]:
    report = detection_report(releases, list(enumerate(ledgers)), seed=1)
    pooled = report[0]["pooled"]
    return {k: round(float(v), 3) for k, v in pooled.items() if v is not None}


def deciding_fact(releases: list[PublishedRelease], ledgers: list[ReleaseLedger]) -> dict[str, Any]:
    """Share of counterfeits and of true rows whose set their release holds strictly more
    often than every other release, and the AUC of that fact alone (releases 2 on)."""
    per_release = [Counter(r for c in rel.clusters for r in c.rows) for rel in releases]
    facts, labels = [], []
    for k, (release, ledger) in enumerate(zip(releases, ledgers, strict=True)):
        if k == 0:
            continue
        others = [per_release[j] for j in range(len(releases)) if j != k]
        for cluster, led in zip(release.clusters, ledger.clusters, strict=True):
            fake = set(led.counterfeit_rows)
            for p, row in enumerate(cluster.rows):
                mine = per_release[k][row]
                facts.append(all(h.get(row, 0) < mine for h in others))
                labels.append(p in fake)
    f, y = np.array(facts), np.array(labels)
    return {
        "counterfeits": round(float(f[y].mean()), 3),
        "true_rows": round(float(f[~y].mean()), 3),
        "auc": round(float(roc_auc_score(y, f)), 3),
    }


def measure(folder: Path, releases_count: int) -> dict[str, Any]:
    releases, ledgers = read_series(folder, releases_count)
    result: dict[str, Any] = {"fact": deciding_fact(releases, ledgers), "modes": {}}
    for mode in MODES:
        runs = []
        for draw in range(1 if mode == "real" else DRAWS):
            if mode == "real":
                runs.append(_pooled(releases, ledgers))
            elif mode in ("anywhere", "placement"):
                labels = _relabelled(releases, ledgers, mode == "placement", draw)
                runs.append(_pooled(releases, labels))
            else:
                series = _replaced(releases, ledgers, _twins(mode == "twin_keeps"), draw)
                runs.append(_pooled(*series))
        result["modes"][mode] = runs
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--work", type=Path, default=None, help="where series are published/reused")
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        work = args.work or Path(scratch)
        for name, corpus, size, count, seed in SERIES:
            folder = build_series(
                corpus, size, count, seed, work / f"b{corpus}-{count}x{size}-s{seed}-blend"
            )
            found = measure(folder, count)
            results.append({"series": name, **found})
            fact = found["fact"]
            print(
                f"{name}: strictly most copies in its release: counterfeits "
                f"{fact['counterfeits']}, true rows {fact['true_rows']}, AUC {fact['auc']}",
                flush=True,
            )
            for mode, runs in found["modes"].items():
                shown = ", ".join(
                    f"{r.get('logistic')} / {r.get('logistic_with_counts')}" for r in runs
                )
                print(f"  {mode:<10} logistic / with counts: {shown}", flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

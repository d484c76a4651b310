"""Serial risk under an adversary who discounts rows by a counterfeit detector (issue 20).

The paper's adversary (design.md §4) treats every published row alike. Each cluster publishes how
many of its rows are counterfeits (``k``, design.md §3); an adversary with a detector removes, in
every cluster, the ``k`` rows the detector finds most suspect, keeps the cluster's private
counts (capped so that ``N(s, C*)`` fits the smaller cluster: the conservative reading in
which the removed rows were s̄-counterfeits) and runs the paper's serial risk
(:func:`~app.core.risk.assess.assess_series`) on the reduced releases.

Three detectors bracket it (:func:`discounted_risks`): ``blind`` removes ``k`` random rows
(what knowing the counts alone gives), ``detector`` the ``k`` most suspect by a score from
public data, ``perfect`` the ``k`` true counterfeits (ledger labels: the upper bound).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from app.core.attacks.frequency import (
    SeriesCounts,
    counterfeit_labels,
    detection_report,
    rarity_score,
    row_features,
    top_k_rows,
)
from app.core.model import PublishedCluster, PublishedRelease, ReleaseLedger
from app.core.risk.assess import assess_series

__all__ = ["discount_release", "discounted_risks", "frequency_audit", "top_k_rows"]

Floats = NDArray[np.float64]


def _reduced(cluster: PublishedCluster, removed: Sequence[int]) -> PublishedCluster:
    gone = set(removed)
    rows = [row for p, row in enumerate(cluster.rows) if p not in gone]
    n = len(rows)
    share = {s: min(k, n) for s, k in cluster.global_share.items()}
    counts = {s: max(0, min(k, n - share.get(s, 0))) for s, k in cluster.private_counts.items()}
    return PublishedCluster(cluster.cluster_id, rows, counts, share, 0)


def discount_release(
    release: PublishedRelease, removed: Sequence[Sequence[int]]
) -> PublishedRelease:
    """``release`` without the rows ``removed`` (per cluster, positions), private counts
    kept but capped at the new size, counterfeit counts 0; the global bag and population
    rates as published."""
    return PublishedRelease(
        release_no=release.release_no,
        clusters=[_reduced(c, r) for c, r in zip(release.clusters, removed, strict=True)],
        global_bag=dict(release.global_bag),
        population_rates=dict(release.population_rates),
        private_terms=release.private_terms,
        global_counterfeits=release.global_counterfeits,
        label=release.label,
    )


def discounted_risks(
    releases: Sequence[PublishedRelease],
    scores: dict[str, Sequence[Floats]],
    r_th: float,
    seed: int = 0,
) -> dict[str, list[dict[str, Any]]]:
    """The paper's serial risk after each detector's discount.

    Parameters
    ----------
    releases:
        The public series.
    scores:
        Per detector name, one score array per release (row order, higher = more suspect);
        ``blind`` (random scores from ``seed``) is always added.
    r_th:
        The threshold rows are counted over.

    Returns
    -------
    dict
        Per detector, per release: ``release_no``, ``removed`` rows, ``rows`` left,
        ``rows_over_threshold`` and ``max_serial_risk`` (formula 15 on the reduced series).
    """
    rng = np.random.default_rng(seed)
    every = {"blind": [rng.random(r.n_rows) for r in releases], **scores}
    out: dict[str, list[dict[str, Any]]] = {}
    for name, per_release in every.items():
        reduced = []
        removed = []
        for j, (release, s) in enumerate(zip(releases, per_release, strict=True)):
            chosen = top_k_rows(release, np.asarray(s, dtype=np.float64), seed + j)
            removed.append(sum(len(c) for c in chosen))
            reduced.append(discount_release(release, chosen))
        risks = assess_series(reduced, r_th, with_rows=False)
        out[name] = [
            {
                "release_no": risk.release_no,
                "removed": gone,
                "rows": risk.n_rows,
                "rows_over_threshold": risk.rows_over_threshold,
                "max_serial_risk": risk.max_serial_risk,
            }
            for risk, gone in zip(risks, removed, strict=True)
        ]
    return out


def frequency_audit(
    releases: Sequence[PublishedRelease],
    ledgers: Sequence[ReleaseLedger | None],
    r_th: float | None,
    seed: int = 0,
) -> dict[str, Any]:
    """The frequency detector's section of an audit (``serialpub attack``, ``verify``, the
    job's report): aggregates only.

    ``detection``: :func:`~app.core.attacks.frequency.detection_report` of every release
    whose ledger is given (``ledgers[j]`` or ``None``); ``risk`` (when ``r_th`` is given):
    :func:`discounted_risks` of ``blind``, ``detector`` (the unsupervised
    :func:`~app.core.attacks.frequency.rarity_score`, public data only) and, when every
    ledger is given, ``perfect`` (the ledger's labels).
    """
    labelled = [(j, led) for j, led in enumerate(ledgers) if led is not None]
    report: dict[str, Any] = {
        "score": "rarity",
        "detection": detection_report(releases, labelled, seed) if labelled else [],
    }
    if r_th is None:
        return _finite_dict(report)
    counts = SeriesCounts.of(releases)
    scores: dict[str, Sequence[Floats]] = {
        "detector": [rarity_score(row_features(releases, j, counts)) for j in range(len(releases))]
    }
    if labelled and len(labelled) == len(releases):
        scores["perfect"] = [
            counterfeit_labels(r, led).astype(np.float64)
            for r, (_, led) in zip(releases, labelled, strict=True)
        ]
    report["r_th"] = r_th
    report["risk"] = discounted_risks(releases, scores, r_th, seed)
    return _finite_dict(report)


def _finite_dict(report: dict[str, Any]) -> dict[str, Any]:
    return {k: _finite(v) for k, v in report.items()}


def _finite(value: Any) -> Any:
    """NaN (an AUC without counterfeits) as ``None``: JSON has no NaN."""
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value

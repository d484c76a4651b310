"""Serial risk under an adversary who discounts rows by a counterfeit detector.

The paper's adversary (design.md §4) treats every published row alike. Each cluster publishes how
many of its rows are counterfeits (``k``, design.md §3); an adversary with a detector removes, in
every cluster, the ``k`` rows the detector finds most suspect, keeps the cluster's private
counts (capped so that ``N(s, C*)`` fits the smaller cluster: the conservative reading in
which the removed rows were s̄-counterfeits) and runs the paper's serial risk
(:func:`~app.core.risk.assess.assess_series`) on the reduced releases.

Detectors (:func:`discounted_risks`): ``blind`` removes ``k`` random rows (what knowing the
counts alone gives), ``detector`` the ``k`` most suspect by a score from public data. With the
ledger's labels, two more: ``perfect`` removes *every* counterfeit row, FP2's and the repair's
too (the release's published total says how many), which leaves the true rows: the upper bound;
``control`` removes ``k`` rows per cluster drawn among the *true* rows, a removal that tells the
adversary nothing about the counterfeits. What ``control`` puts over r_th is what removing rows
and recomputing does by itself; only what a detector puts over beyond it comes from finding
counterfeits (docs/lab/counterfeits.md, "Detector-aware serial risk").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from app.core.attacks.discount import discount_release
from app.core.attacks.frequency import (
    SeriesCounts,
    counterfeit_labels,
    cross_validated_scores,
    detection_report,
    rarity_score,
    row_clusters,
    row_features,
    top_k_rows,
)
from app.core.attacks.mixture_risk import DEFAULT_DRAWS, mixture_risks
from app.core.model import PublishedRelease, ReleaseLedger
from app.core.progress import ProgressCallback
from app.core.risk.assess import assess_series

__all__ = [
    "discount_release",
    "discounted_risks",
    "frequency_audit",
    "logistic_odds",
    "top_k_rows",
]

Floats = NDArray[np.float64]


def _every_labelled(release: PublishedRelease, labels: NDArray[np.bool_]) -> list[list[int]]:
    """Per cluster, the positions of every row ``labels`` marks (row order)."""
    chosen: list[list[int]] = []
    start = 0
    for cluster in release.clusters:
        mine = labels[start : start + cluster.size]
        start += cluster.size
        chosen.append([int(p) for p in np.flatnonzero(mine)])
    return chosen


def _true_rows_at_random(
    release: PublishedRelease, labels: NDArray[np.bool_], seed: int
) -> list[list[int]]:
    """Per cluster, ``k`` (its published count) positions drawn at random among the rows
    ``labels`` marks as true, fewer when the cluster has fewer true rows."""
    rng = np.random.default_rng(seed)
    chosen: list[list[int]] = []
    start = 0
    for cluster in release.clusters:
        true = np.flatnonzero(~labels[start : start + cluster.size])
        start += cluster.size
        k = min(cluster.counterfeits, len(true))
        chosen.append(sorted(int(p) for p in rng.choice(true, size=k, replace=False)))
    return chosen


def discounted_risks(
    releases: Sequence[PublishedRelease],
    scores: dict[str, Sequence[Floats]],
    r_th: float,
    seed: int = 0,
    labels: Sequence[NDArray[np.bool_]] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """The paper's serial risk after each detector's discount.

    Parameters
    ----------
    releases:
        The public series.
    scores:
        Per detector name, one score array per release (row order, higher = more suspect);
        each removes the ``k`` highest-scored rows of every cluster. ``blind`` (random
        scores from ``seed``) is always added.
    r_th:
        The threshold rows are counted over.
    labels:
        The ledger's counterfeit labels, one boolean array per release (row order), or
        ``None``. Given, they add ``perfect`` (every counterfeit removed) and ``control``
        (``k`` true rows per cluster removed at random).

    Returns
    -------
    dict
        Per detector, per release: ``release_no``, ``removed`` rows, ``rows`` left,
        ``rows_over_threshold`` and ``max_serial_risk`` (formula 15 on the reduced series).
    """
    rng = np.random.default_rng(seed)
    every = {"blind": [rng.random(r.n_rows) for r in releases], **scores}
    removals: dict[str, list[list[list[int]]]] = {
        name: [
            top_k_rows(release, np.asarray(s, dtype=np.float64), seed + j)
            for j, (release, s) in enumerate(zip(releases, per_release, strict=True))
        ]
        for name, per_release in every.items()
    }
    if labels is not None:
        pairs = list(zip(releases, labels, strict=True))
        removals["control"] = [
            _true_rows_at_random(release, lab, seed + j) for j, (release, lab) in enumerate(pairs)
        ]
        removals["perfect"] = [_every_labelled(release, lab) for release, lab in pairs]
    out: dict[str, list[dict[str, Any]]] = {}
    for name, chosen in removals.items():
        reduced = [
            discount_release(release, gone) for release, gone in zip(releases, chosen, strict=True)
        ]
        risks = assess_series(reduced, r_th, with_rows=False)
        out[name] = [
            {
                "release_no": risk.release_no,
                "removed": sum(len(c) for c in gone),
                "rows": risk.n_rows,
                "rows_over_threshold": risk.rows_over_threshold,
                "max_serial_risk": risk.max_serial_risk,
            }
            for risk, gone in zip(risks, chosen, strict=True)
        ]
    return out


def frequency_audit(
    releases: Sequence[PublishedRelease],
    ledgers: Sequence[ReleaseLedger | None],
    r_th: float | None,
    seed: int = 0,
    draws: int = DEFAULT_DRAWS,
    progress: ProgressCallback | None = None,
    mixture_scored: Sequence[int] | None = None,
) -> dict[str, Any]:
    """The frequency detector's section of an audit (``serialpub attack``, ``verify``, the
    job's report): aggregates only.

    ``detection``: :func:`~app.core.attacks.frequency.detection_report` of every release
    whose ledger is given (``ledgers[j]`` or ``None``); ``risk`` (when ``r_th`` is given):
    :func:`discounted_risks` of ``blind``, ``detector`` (the unsupervised
    :func:`~app.core.attacks.frequency.rarity_score`, public data only) and, when every
    ledger is given, ``perfect`` (every counterfeit of the ledger removed) and ``control``
    (``k`` of the ledger's true rows per cluster removed at random); ``mixture`` (when
    ``r_th`` is given and ``draws`` > 0): :func:`~app.core.attacks.mixture_risk.mixture_risks`
    of ``blind`` (the published counts alone) and, when every ledger is given, ``logistic``
    (the odds of the cross-validated logistic model with the counts, fitted on the ledgers'
    labels: a detector as good as the one the AUCs report), for the releases at the
    positions ``mixture_scored`` (default every one); ``progress`` is told
    ``("frequency", share of the draws done)``.
    """
    labelled = [(j, led) for j, led in enumerate(ledgers) if led is not None]
    report: dict[str, Any] = {
        "score": "rarity",
        "detection": detection_report(releases, labelled, seed) if labelled else [],
    }
    if r_th is None:
        return _finite_dict(report)
    counts = SeriesCounts.of(releases)
    features = [row_features(releases, j, counts) for j in range(len(releases))]
    scores: dict[str, Sequence[Floats]] = {"detector": [rarity_score(f) for f in features]}
    labels = None
    if labelled and len(labelled) == len(releases):
        labels = [
            counterfeit_labels(r, led) for r, (_, led) in zip(releases, labelled, strict=True)
        ]
    report["r_th"] = r_th
    report["risk"] = discounted_risks(releases, scores, r_th, seed, labels)
    if draws > 0:
        odds = {} if labels is None else logistic_odds(releases, features, labels, seed)
        tell = None if progress is None else lambda f: progress("frequency", f)
        report["mixture"] = mixture_risks(
            releases, odds, r_th, draws, seed, tell, scored=mixture_scored
        )
    return _finite_dict(report)


def logistic_odds(
    releases: Sequence[PublishedRelease],
    features: Sequence[Floats],
    labels: Sequence[NDArray[np.bool_]],
    seed: int,
) -> dict[str, list[Floats]]:
    """``{"logistic": odds per release}``: the out-of-fold P(counterfeit) of the logistic
    model with the counts (:func:`~app.core.attacks.frequency.cross_validated_scores`, folds by
    release and cluster) as odds ``p / (1 - p)``; empty when it cannot be fitted (fewer than
    two clusters with a counterfeit). The model weighs the classes evenly, which scales every
    odds by one factor: the draws of a release's ``K`` rows only compare them."""
    x = np.vstack(features)
    y = np.concatenate(labels)
    groups = np.concatenate(
        [row_clusters(r) + 1_000_000 * j for j, r in enumerate(releases)]
    ).astype(np.int64)
    p = cross_validated_scores(x, y, groups, seed)
    if not np.isfinite(p).all():
        return {}
    odds = p / np.maximum(1.0 - p, 1e-12)
    bounds = np.cumsum([r.n_rows for r in releases])[:-1]
    return {"logistic": list(np.split(odds, bounds))}


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

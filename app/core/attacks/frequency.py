"""Counterfeits that stand out by frequency: features of public rows, and AUCs.

A counterfeit row (design.md §5, Definition 14) is a fresh sample of its cluster's terms, not
identical to any row of its cluster. It therefore tends to carry a non-private set that no
other row of the series carries, and term pairs that rarely go together. Meaning plays no
part (the semantic detectors of :mod:`~app.core.attacks.anony_measures` see ~0.5): counting
the series' public rows is enough.

Every feature is computed from PUBLIC releases only (:func:`row_features`); the private
ledger gives the labels (:func:`counterfeit_labels`) and is used only to score a detector
(:func:`detection_report`). The detector-aware serial risk lives in
:mod:`~app.core.attacks.frequency_risk`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
from numpy.typing import NDArray

from app.core.model import PublishedRelease, ReleaseLedger, Row

__all__ = [
    "COUNTS_FEATURE",
    "FEATURES",
    "SUSPECT_SIGN",
    "SeriesCounts",
    "counterfeit_labels",
    "cross_validated_scores",
    "detection_report",
    "rarity_score",
    "row_clusters",
    "row_features",
    "top_k_precision",
    "top_k_rows",
]

Floats = NDArray[np.float64]

#: Columns of :func:`row_features`, natural values (``log`` is the natural logarithm).
FEATURES: tuple[str, ...] = (
    "log_series_count",  # rows of the whole series with the row's non-private set
    "log_release_count",  # ... of the row's own release
    "log_cluster_count",  # ... of the row's own cluster
    "length",  # terms of the row
    "npmi_mean",  # mean NPMI of the row's term pairs over the series' rows
    "npmi_min",  # lowest NPMI of those pairs
    "log_rarest_term",  # rows of the series holding the row's rarest term
)
#: The "with counts" column: the cluster's published counterfeits over its size (design.md §3).
COUNTS_FEATURE = "counterfeit_share"
#: Which way each column points to a counterfeit: -1 low = suspect, +1 high = suspect.
SUSPECT_SIGN: dict[str, int] = {
    "log_series_count": -1,
    "log_release_count": -1,
    "log_cluster_count": -1,
    "length": -1,
    "npmi_mean": -1,
    "npmi_min": -1,
    "log_rarest_term": -1,
    COUNTS_FEATURE: 1,
}


@dataclass(frozen=True, slots=True)
class SeriesCounts:
    """Counts over every published row of a series: of each non-private set, of the rows
    holding each term, and of the rows holding each pair of terms."""

    sets: Counter[Row]
    terms: Counter[str]
    pairs: Counter[tuple[str, str]]
    n_rows: int

    @classmethod
    def of(cls, releases: Sequence[PublishedRelease]) -> SeriesCounts:
        """Count ``releases``' rows (the public view only).

        >>> from app.core.model import release_from_counts
        >>> r = release_from_counts(1, [([("a", "b"), ("a",), ("a", "b")], {}, {}, 0)], {}, {})
        >>> c = SeriesCounts.of([r])
        >>> c.sets[("a", "b")], c.terms["a"], c.pairs[("a", "b")], c.n_rows
        (2, 3, 2, 3)
        """
        sets: Counter[Row] = Counter()
        for release in releases:
            for cluster in release.clusters:
                sets.update(cluster.rows)
        terms: Counter[str] = Counter()
        pairs: Counter[tuple[str, str]] = Counter()
        for row, n in sets.items():
            for term in row:
                terms[term] += n
            for pair in combinations(row, 2):  # rows are sorted: pairs are canonical
                pairs[pair] += n
        return cls(sets, terms, pairs, sum(sets.values()))

    def npmi(self, a: str, b: str) -> float:
        """Normalised pointwise mutual information of two terms over the rows (Bouma 2009):
        ``log(p(ab) / (p(a) p(b))) / -log p(ab)``, in [-1, 1]; -1 when they never meet."""
        joint = self.pairs.get((a, b) if a < b else (b, a), 0)
        if not joint:
            return -1.0
        if joint == self.n_rows:
            return 1.0
        n = self.n_rows
        pmi = math.log(joint * n / (self.terms[a] * self.terms[b]))
        return pmi / -math.log(joint / n)


def row_clusters(release: PublishedRelease) -> NDArray[np.int64]:
    """The cluster position of each row, in :func:`row_features`' order."""
    return np.array([c for c, cl in enumerate(release.clusters) for _ in cl.rows], dtype=np.int64)


def row_features(
    releases: Sequence[PublishedRelease], index: int, counts: SeriesCounts | None = None
) -> Floats:
    """Per row of ``releases[index]`` (clusters in order, rows in order): :data:`FEATURES`
    then :data:`COUNTS_FEATURE`, from the public releases only.

    Rows of one term have no pair: their NPMI columns are 0 (independence, no evidence).

    >>> from app.core.model import release_from_counts
    >>> r = release_from_counts(1, [([("a", "b"), ("a", "b"), ("c",)], {}, {}, 1)], {}, {})
    >>> row_features([r], 0)[2].round(3).tolist()
    [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.333]
    """
    counts = SeriesCounts.of(releases) if counts is None else counts
    release = releases[index]
    in_release = release.row_counts()
    out: list[list[float]] = []
    for cluster in release.clusters:
        in_cluster = Counter(cluster.rows)
        share = cluster.counterfeits / cluster.size if cluster.size else 0.0
        for row in cluster.rows:
            npmis = [counts.npmi(a, b) for a, b in combinations(row, 2)]
            rarest = min((counts.terms[t] for t in row), default=counts.n_rows)
            out.append(
                [
                    math.log(counts.sets[row]),
                    math.log(in_release[row]),
                    math.log(in_cluster[row]),
                    float(len(row)),
                    float(np.mean(npmis)) if npmis else 0.0,
                    min(npmis) if npmis else 0.0,
                    math.log(max(rarest, 1)),
                    share,
                ]
            )
    return np.array(out, dtype=np.float64).reshape(-1, len(FEATURES) + 1)


def counterfeit_labels(release: PublishedRelease, ledger: ReleaseLedger) -> NDArray[np.bool_]:
    """Which rows are counterfeits (``ClusterLedger.counterfeit_rows``), in row order: the
    ground truth, used only to score."""
    labels: list[bool] = []
    for cluster, led in zip(release.clusters, ledger.clusters, strict=True):
        fake = set(led.counterfeit_rows)
        labels.extend(p in fake for p in range(cluster.size))
    return np.array(labels, dtype=np.bool_)


def rarity_score(features: Floats) -> Floats:
    """The unsupervised detector: rarer across the series = more suspect, ties broken by the
    lower mean NPMI. Needs no label, so the adversary can run it on public data alone.

    >>> x = np.array([[0.0, 0, 0, 2, 0.5, 0.5, 0, 0], [1.0, 0, 0, 2, 0.1, 0, 0, 0]])
    >>> rarity_score(x).round(4).tolist()
    [-0.0005, -1.0001]
    """
    return -features[:, 0] - 1e-3 * features[:, 4]


def _auc(labels: NDArray[np.bool_], scores: Floats) -> float:
    from sklearn.metrics import roc_auc_score

    if labels.all() or not labels.any() or np.isnan(scores).any():
        return float("nan")
    return float(roc_auc_score(labels, scores))


def cross_validated_scores(
    features: Floats,
    labels: NDArray[np.bool_],
    groups: NDArray[np.int64],
    seed: int,
    folds: int = 5,
) -> Floats:
    """Out-of-fold P(counterfeit) of a logistic model (standardised features, balanced class
    weights), folds by group (a cluster: the counts column never leaks across a fold) and
    stratified; ``nan`` everywhere when fewer than two groups hold a counterfeit."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedGroupKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    splits = min(folds, len(set(groups[labels].tolist())))
    if splits < 2 or labels.all():
        return np.full(len(labels), np.nan)
    model = make_pipeline(
        StandardScaler(), LogisticRegression(class_weight="balanced", max_iter=1000)
    )
    cv = StratifiedGroupKFold(n_splits=splits, shuffle=True, random_state=seed)
    try:
        proba = cross_val_predict(
            model, features, labels, groups=groups, cv=cv, method="predict_proba"
        )
    except ValueError:  # a training fold of one class
        return np.full(len(labels), np.nan)
    return np.asarray(proba[:, 1], dtype=np.float64)


def top_k_rows(release: PublishedRelease, scores: Floats, seed: int) -> list[list[int]]:
    """Per cluster, the positions of its ``k`` = ``counterfeits`` highest-scored rows (ties
    broken at random from ``seed``), ``scores`` in row order.

    >>> from app.core.model import release_from_counts
    >>> r = release_from_counts(1, [([("a",), ("b",), ("c",)], {}, {}, 1)], {}, {})
    >>> top_k_rows(r, np.array([0.1, 0.9, 0.5]), 0)
    [[1]]
    """
    rng = np.random.default_rng(seed)
    chosen: list[list[int]] = []
    start = 0
    for cluster in release.clusters:
        mine = scores[start : start + cluster.size]
        start += cluster.size
        k = min(cluster.counterfeits, cluster.size)
        order = np.lexsort((rng.random(cluster.size), -mine))  # last key sorts first
        chosen.append(sorted(int(p) for p in order[:k]))
    return chosen


def top_k_precision(
    release: PublishedRelease, scores: Floats, labels: NDArray[np.bool_], seed: int
) -> dict[str, float]:
    """In each cluster with ``k`` published counterfeits, take the ``k`` rows scored most
    suspect (ties at random): ``precision`` = counterfeits taken / rows taken; ``chance``
    the expected precision of ``k`` random rows, ``sum k f/n / sum k`` (``f`` counterfeits
    of ``n`` rows)."""
    picked = hits = 0
    expected = 0.0
    start = 0
    for cluster, chosen in zip(release.clusters, top_k_rows(release, scores, seed), strict=True):
        mine = labels[start : start + cluster.size]
        start += cluster.size
        picked += len(chosen)
        hits += int(mine[list(chosen)].sum()) if chosen else 0
        expected += len(chosen) * float(mine.mean()) if cluster.size else 0.0
    return {
        "picked": float(picked),
        "precision": hits / picked if picked else float("nan"),
        "chance": expected / picked if picked else float("nan"),
    }


def detection_report(
    releases: Sequence[PublishedRelease],
    labelled: Sequence[tuple[int, ReleaseLedger]],
    seed: int = 0,
    folds: int = 5,
) -> list[dict[str, Any]]:
    """AUC of telling counterfeits from true rows by frequency, for each labelled release.

    Parameters
    ----------
    releases:
        The public series (features count over all of it).
    labelled:
        ``(index into releases, its ledger)`` of each release to score.
    seed:
        Folds and ties.

    Returns
    -------
    list of dict
        Per release: ``rows``, ``counterfeits``; ``auc`` of each single feature in its
        suspect direction (:data:`SUSPECT_SIGN`), of ``rarity`` (:func:`rarity_score`), of the
        cross-validated logistic model on :data:`FEATURES` (``logistic``) and with the counts
        column (``logistic_with_counts``), pooled over the labelled releases (folds by
        release and cluster); ``rarity_in_flagged``, ``logistic_in_flagged`` the same
        restricted to clusters that publish counterfeits (k > 0); ``top_k`` the
        :func:`top_k_precision` of ``rarity`` and ``logistic_with_counts``; ``pooled`` the
        logistic AUCs over every labelled release.
    """
    counts = SeriesCounts.of(releases)
    parts = [
        (row_features(releases, j, counts), counterfeit_labels(releases[j], led), j)
        for j, led in labelled
    ]
    if not parts:
        return []
    x = np.vstack([f for f, _, _ in parts])
    y = np.concatenate([lab for _, lab, _ in parts])
    groups = np.concatenate(
        [row_clusters(releases[j]) + 1_000_000 * j for _, _, j in parts]
    ).astype(np.int64)
    plain = cross_validated_scores(x[:, : len(FEATURES)], y, groups, seed, folds)
    full = cross_validated_scores(x, y, groups, seed, folds)
    pooled = {"logistic": _auc(y, plain), "logistic_with_counts": _auc(y, full)}
    report: list[dict[str, Any]] = []
    start = 0
    for features, labels, j in parts:
        end = start + len(labels)
        areas = {
            name: _auc(labels, SUSPECT_SIGN[name] * features[:, c])
            for c, name in enumerate((*FEATURES, COUNTS_FEATURE))
        }
        areas["rarity"] = _auc(labels, rarity_score(features))
        areas["logistic"] = _auc(labels, plain[start:end])
        areas["logistic_with_counts"] = _auc(labels, full[start:end])
        # Where the published counts say there is something to find: rows of clusters
        # with k > 0 (elsewhere the counts alone clear every row).
        flagged = features[:, len(FEATURES)] > 0
        areas["rarity_in_flagged"] = _auc(labels[flagged], rarity_score(features[flagged]))
        areas["logistic_in_flagged"] = _auc(labels[flagged], plain[start:end][flagged])
        report.append(
            {
                "release_no": releases[j].release_no,
                "rows": len(labels),
                "counterfeits": int(labels.sum()),
                "auc": areas,
                "top_k": {
                    "rarity": top_k_precision(releases[j], rarity_score(features), labels, seed),
                    "logistic_with_counts": top_k_precision(
                        releases[j], np.nan_to_num(full[start:end], nan=0.0), labels, seed
                    ),
                },
                "pooled": pooled,
            }
        )
        start = end
    return report

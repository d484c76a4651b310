"""The frequency detector: features from public rows, AUCs against the ledger, and
the serial risk once an adversary discounts each cluster's published counterfeits."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from app.core.attacks.frequency import (
    FEATURES,
    SeriesCounts,
    counterfeit_labels,
    detection_report,
    rarity_score,
    row_features,
    top_k_precision,
)
from app.core.attacks.frequency_risk import (
    _every_labelled,
    _true_rows_at_random,
    discount_release,
    discounted_risks,
    frequency_audit,
    top_k_rows,
)
from app.core.model import (
    ClusterLedger,
    PublishedCluster,
    PublishedRelease,
    ReleaseLedger,
    Row,
    release_from_counts,
)


def _tiny() -> list[PublishedRelease]:
    """Release 1: ab, ab, c, c. Release 2: ab, c and the counterfeit ac (published k = 1)."""
    r1 = release_from_counts(1, [([("a", "b"), ("a", "b"), ("c",), ("c",)], {}, {}, 0)], {}, {})
    r2 = release_from_counts(2, [([("a", "b"), ("c",), ("a", "c")], {"s": 1}, {}, 1)], {}, {})
    return [r1, r2]


def test_series_counts_of_the_tiny_series() -> None:
    counts = SeriesCounts.of(_tiny())
    assert counts.n_rows == 7
    assert counts.sets == {("a", "b"): 3, ("c",): 3, ("a", "c"): 1}
    assert counts.terms == {"a": 4, "b": 3, "c": 4}
    assert counts.pairs == {("a", "b"): 3, ("a", "c"): 1}
    assert counts.npmi("c", "a") == pytest.approx(math.log(7 / 16) / math.log(7))
    assert counts.npmi("b", "c") == -1.0  # never together


def test_row_features_have_the_known_answers() -> None:
    features = row_features(_tiny(), 1)
    assert features.shape == (3, len(FEATURES) + 1)
    npmi_ab = math.log(3 * 7 / 12) / -math.log(3 / 7)
    npmi_ac = math.log(7 / 16) / math.log(7)
    expected = [
        [math.log(3), 0.0, 0.0, 2.0, npmi_ab, npmi_ab, math.log(3), 1 / 3],
        [math.log(3), 0.0, 0.0, 1.0, 0.0, 0.0, math.log(4), 1 / 3],
        [0.0, 0.0, 0.0, 2.0, npmi_ac, npmi_ac, math.log(4), 1 / 3],
    ]
    np.testing.assert_allclose(features, expected)
    # The counterfeit is the rarest across the series: the unsupervised detector's pick.
    assert top_k_rows(_tiny()[1], rarity_score(features), seed=0) == [[2]]


def _planted(
    seed: int, clusters: int = 30, size: int = 10
) -> tuple[list[PublishedRelease], list[ReleaseLedger]]:
    """Three releases drawing true rows from one pool of 40 sets (so sets repeat across the
    series) and, in each cluster of releases 2 and 3, 1-2 counterfeits with a fresh pair of
    the cluster's terms that no true row carries."""
    rng = random.Random(seed)
    pool: list[Row] = [
        tuple(sorted({f"t{rng.randrange(30)}" for _ in range(2)})) for _ in range(40)
    ]
    releases: list[PublishedRelease] = []
    ledgers: list[ReleaseLedger] = []
    fresh = 0
    for no in (1, 2, 3):
        published = []
        led = []
        for c in range(clusters):
            rows = [rng.choice(pool) for _ in range(size)]
            k = rng.choice((1, 2)) if no > 1 else 0
            for _ in range(k):
                rows.append((f"u{fresh}", f"v{fresh}"))
                fresh += 1
            order = list(range(len(rows)))
            rng.shuffle(order)
            published.append(
                PublishedCluster(f"c{c + 1}", [rows[p] for p in order], {"s": 1}, {}, k)
            )
            led.append(
                ClusterLedger(counterfeit_rows=[i for i, p in enumerate(order) if p >= size])
            )
        releases.append(PublishedRelease(no, published, {}, {"s": 1 / (size + 1)}))
        ledgers.append(ReleaseLedger(led))
    return releases, ledgers


def test_planted_counterfeits_are_found_with_a_high_auc() -> None:
    releases, ledgers = _planted(seed=1)
    report = detection_report(releases, [(1, ledgers[1]), (2, ledgers[2])], seed=0)
    assert [r["release_no"] for r in report] == [2, 3]
    for entry in report:
        assert entry["counterfeits"] == sum(
            c.counterfeits for c in releases[entry["release_no"] - 1].clusters
        )
        assert entry["auc"]["log_series_count"] > 0.95
        assert entry["auc"]["rarity"] > 0.95
        assert entry["auc"]["logistic"] > 0.9
        top = entry["top_k"]["rarity"]
        assert top["precision"] > 0.9 > 0.3 > top["chance"]
    assert report[0]["pooled"]["logistic_with_counts"] > 0.9


def test_a_random_labelling_scores_about_one_half() -> None:
    releases, _ = _planted(seed=2)
    rng = random.Random(3)
    # Only true rows of release 1 (no counterfeit), a random tenth called counterfeit.
    fake = ReleaseLedger(
        [ClusterLedger(counterfeit_rows=rng.sample(range(c.size), 1)) for c in releases[0].clusters]
    )
    entry = detection_report(releases, [(0, fake)], seed=0)[0]
    for name in ("log_series_count", "rarity", "npmi_mean", "logistic"):
        assert abs(entry["auc"][name] - 0.5) < 0.15, (name, entry["auc"][name])


def test_labels_follow_the_ledger() -> None:
    release = _tiny()[1]
    ledger = ReleaseLedger([ClusterLedger(counterfeit_rows=[2])])
    assert counterfeit_labels(release, ledger).tolist() == [False, False, True]
    features = row_features(_tiny(), 1)
    assert top_k_precision(
        release, rarity_score(features), counterfeit_labels(release, ledger), 0
    ) == {
        "picked": 1.0,
        "precision": 1.0,
        "chance": pytest.approx(1 / 3),
    }


def test_discounting_caps_the_private_counts_at_the_new_size() -> None:
    release = release_from_counts(
        1, [([("a",), ("b",), ("c",)], {"s": 2, "t": 1}, {"s": 1}, 2)], {"s": 1}, {"s": 0.5}
    )
    reduced = discount_release(release, [[0, 2]])
    cluster = reduced.clusters[0]
    assert cluster.rows == [("b",)]
    assert (cluster.private_counts, cluster.global_share, cluster.counterfeits) == (
        {"s": 0, "t": 1},
        {"s": 1},
        0,
    )
    assert reduced.global_bag == {"s": 1} and reduced.population_rates == {"s": 0.5}


def test_discounted_risks_remove_the_published_counterfeits() -> None:
    releases, ledgers = _planted(seed=1, clusters=8)
    labels = [counterfeit_labels(r, led) for r, led in zip(releases, ledgers, strict=True)]
    risks = discounted_risks(releases, {}, r_th=8.0, seed=0, labels=labels)
    assert set(risks) == {"blind", "control", "perfect"}
    published = [sum(c.counterfeits for c in r.clusters) for r in releases]
    # _planted publishes every counterfeit in its cluster's count, so all three remove k.
    for name in risks:
        removed = [r["removed"] for r in risks[name]]
        assert removed == published == [int(lab.sum()) for lab in labels]
        rows = [r["rows"] for r in risks[name]]
        assert rows == [r.n_rows - gone for r, gone in zip(releases, removed, strict=True)]
    audit = frequency_audit(releases, ledgers, r_th=8.0)
    assert set(audit["risk"]) == {"blind", "detector", "control", "perfect"}
    assert audit["detection"][0]["auc"]["rarity"] is None  # release 1: no counterfeit
    without = frequency_audit(releases, [None, *ledgers[1:]], r_th=8.0)
    assert "perfect" not in without["risk"] and "control" not in without["risk"]
    # The Bayesian adversary: equal odds from the public counts; the logistic detector's
    # odds only with every ledger (its labels fit the model).
    assert set(audit["mixture"]) == {"blind", "logistic"}
    assert set(without["mixture"]) == {"blind"}
    for name, per_release in audit["mixture"].items():
        assert [r["counterfeits"] for r in per_release] == published, name
        assert [r["draws"] for r in per_release] == [16, 16, 16]
    assert "mixture" not in frequency_audit(releases, ledgers, r_th=8.0, draws=0)


def _unpublished() -> tuple[list[PublishedRelease], list[np.ndarray]]:
    """Release 2's cluster publishes k = 1, but two of its five rows are counterfeits (FP2's
    and the repair's are counted only in the release's total): positions 1 and 3."""
    r1 = release_from_counts(1, [([("a",), ("b",), ("c",)], {"s": 1}, {}, 0)], {}, {"s": 0.3})
    rows = [("a",), ("x",), ("b",), ("y",), ("c",)]
    r2 = release_from_counts(2, [(rows, {"s": 1}, {}, 1)], {}, {"s": 0.3})
    r2.counterfeit_rows = 2
    labels = [np.zeros(3, dtype=np.bool_), np.array([False, True, False, True, False])]
    return [r1, r2], labels


def test_perfect_removes_every_counterfeit_and_control_only_true_rows() -> None:
    releases, labels = _unpublished()
    for seed in range(20):
        risks = discounted_risks(releases, {}, r_th=8.0, seed=seed, labels=labels)
        # The upper bound takes both counterfeits, not only the cluster's published one.
        assert [r["removed"] for r in risks["perfect"]] == [0, 2]
        assert [r["rows"] for r in risks["perfect"]] == [3, 3]
        # blind and control take the published k = 1.
        assert [r["removed"] for r in risks["blind"]] == [0, 1]
        assert [r["removed"] for r in risks["control"]] == [0, 1]
        # control's row is a true one: what remains still holds both counterfeits.
        gone = _true_rows_at_random(releases[1], labels[1], seed)
        assert len(gone) == 1 and gone[0][0] in (0, 2, 4)
    assert _every_labelled(releases[1], labels[1]) == [[1, 3]]
    # control draws among the true rows, so over seeds it takes each of them.
    drawn = {_true_rows_at_random(releases[1], labels[1], seed)[0][0] for seed in range(40)}
    assert drawn == {0, 2, 4}

"""The Bayesian adversary who weighs which rows are counterfeits, judged by the
oracle (tests/oracle/serial_risk.py) on every hypothesis, enumerated here."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.attacks.mixture_risk import draw_counterfeits, mixture_risks, row_means
from app.core.model import PublishedCluster, PublishedRelease, release_from_counts
from tests.oracle.serial_risk import row_risks

R_TH = 8.0


def _series() -> list[PublishedRelease]:
    """Release 1: a, b, c, d with one copy of s. Release 2: a, b, e, f, g with three copies,
    no cluster count, one counterfeit row in its published total (K = 1). Whether a or b is
    the counterfeit moves the overlap {a, b}, so the hypotheses give different risks."""
    rate = {"s": 0.25}
    r1 = release_from_counts(1, [([("a",), ("b",), ("c",), ("d",)], {"s": 1}, {}, 0)], {}, rate)
    rows = [("a",), ("b",), ("e",), ("f",), ("g",)]
    r2 = release_from_counts(2, [(rows, {"s": 3}, {}, 0)], {}, rate)
    r2.counterfeit_rows = 1
    return [r1, r2]


def _without(release: PublishedRelease, position: int) -> PublishedRelease:
    """The one cluster of ``release`` without the row at ``position``, its copies of s kept
    (capped at the rows left): the hypothesis that this row is the counterfeit."""
    (cluster,) = release.clusters
    rows = cluster.rows[:position] + cluster.rows[position + 1 :]
    counts = {s: min(k, len(rows)) for s, k in cluster.private_counts.items()}
    return PublishedRelease(
        release.release_no,
        [PublishedCluster(cluster.cluster_id, rows, counts, {}, 0)],
        {},
        dict(release.population_rates),
    )


def _exact() -> list[list[Fraction]]:
    """Each row's risk averaged over the five equally likely hypotheses that keep it."""
    r1, r2 = _series()
    totals = [[Fraction(0)] * 4, [Fraction(0)] * 5]
    kept = [[0] * 4, [0] * 5]
    for gone in range(5):
        risks = row_risks([r1, _without(r2, gone)])
        for index in range(4):
            totals[0][index] += risks[0, "c1", index][0]
            kept[0][index] += 1
        for index, original in enumerate(p for p in range(5) if p != gone):
            totals[1][original] += risks[1, "c1", index][0]
            kept[1][original] += 1
    return [
        [t / n for t, n in zip(ts, ns, strict=True)] for ts, ns in zip(totals, kept, strict=True)
    ]


def test_the_mixture_averages_the_oracle_over_the_hypotheses() -> None:
    exact = _exact()
    # By hand (rate 1/4, so a risk is 4 beta). With a or b the counterfeit, release 2 is four
    # rows with three copies and the overlap {b} or {a} tells nothing: 3 for its rows, 1 for
    # release 1's. With e, f or g the counterfeit, the overlap {a, b} must hold one copy
    # (f1 = 3 - (4 - 2) = 1 in release 2, f2 = 1 in release 1): a, b at 2 in both releases;
    # release 2's other two rows hold the other two copies (4), release 1's c, d none (0).
    # Row a of release 2 is kept by the hypotheses b, e, f, g: (3 + 2 + 2 + 2) / 4 = 9/4.
    assert exact == [
        [Fraction(8, 5), Fraction(8, 5), Fraction(2, 5), Fraction(2, 5)],
        [Fraction(9, 4), Fraction(9, 4), Fraction(7, 2), Fraction(7, 2), Fraction(7, 2)],
    ]
    means = row_means(_series(), [np.ones(4), np.ones(5)], R_TH, 4000, np.random.default_rng(3))
    for (mean, error), want in zip(means, exact, strict=True):
        assert np.all(error < 0.05)
        assert np.allclose(mean, [float(w) for w in want], atol=0.06)


def test_a_certain_detector_gives_the_oracle_on_the_true_rows() -> None:
    releases = _series()
    # All the weight on row 3 (f): every draw takes it, the others keep the oracle's risk.
    weights = [np.ones(4), np.array([0.0, 0.0, 0.0, 1.0, 0.0])]
    means = row_means(releases, weights, R_TH, 5, np.random.default_rng(0))
    oracle = row_risks([releases[0], _without(releases[1], 3)])
    assert np.allclose(means[0][0], [float(oracle[0, "c1", i][0]) for i in range(4)])
    want = [float(oracle[1, "c1", i][0]) for i in range(4)]
    assert np.allclose(np.delete(means[1][0], 3), want)
    assert np.isnan(means[1][0][3])  # never kept: no target is a counterfeit
    report = mixture_risks(releases, {"certain": weights}, r_th=1.0, draws=5)
    assert set(report) == {"blind", "certain"}
    second = report["certain"][1]
    assert (second["counterfeits"], second["rows"], second["draws"]) == (1, 4, 5)
    assert second["rows_over_threshold"] == sum(1 for w in want if w > 1.0 + 1e-9)
    assert second["max_serial_risk"] == max(want)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 6), st.integers(0, 6)), min_size=1, max_size=5),
    st.integers(0, 8),
    st.lists(st.sampled_from([0.0, 0.5, 1.0, 3.0]), min_size=30, max_size=30),
    st.integers(0, 2**32 - 1),
)
def test_a_draw_respects_the_published_counts(
    sizes: list[tuple[int, int]], extra: int, pool: list[float], seed: int
) -> None:
    clusters = [
        ([(f"r{c}_{p}",) for p in range(n)], {}, {}, min(k, n)) for c, (n, k) in enumerate(sizes)
    ]
    release = release_from_counts(1, clusters, {}, {})
    n = release.n_rows
    required = sum(min(k, size) for size, k in sizes)
    release.counterfeit_rows = required + extra
    weights = np.array(pool[:n])
    chosen = draw_counterfeits(release, weights, np.random.default_rng(seed))
    assert chosen == draw_counterfeits(release, weights, np.random.default_rng(seed))
    assert len(chosen) == len(sizes)
    for positions, (size, k) in zip(chosen, sizes, strict=True):
        assert len(set(positions)) == len(positions) and all(0 <= p < size for p in positions)
        assert len(positions) >= min(k, size)  # the cluster's published count
    assert sum(len(p) for p in chosen) == min(required + extra, n)  # the release's total
    # A row a detector rules out (weight 0) is drawn only when the others cannot fill a count.
    flat = list(weights)
    start = 0
    positive_short = False
    for size, k in sizes:
        mine = flat[start : start + size]
        positive_short |= sum(1 for w in mine if w > 0) < min(k, size)
        start += size
    if not positive_short and required + extra <= sum(1 for w in flat if w > 0):
        start = 0
        for size, positions in zip((s for s, _ in sizes), chosen, strict=True):
            assert all(flat[start + p] > 0 for p in positions)
            start += size


def test_equal_weights_draw_every_row_alike() -> None:
    (release,) = _series()[1:]
    rng = np.random.default_rng(7)
    drawn = Counter(draw_counterfeits(release, np.ones(5), rng)[0][0] for _ in range(5000))
    assert set(drawn) == set(range(5))
    assert all(abs(count - 1000) < 120 for count in drawn.values())


def test_progress_is_told_after_every_draw() -> None:
    told: list[float] = []
    weights = {"certain": [np.ones(4), np.array([0.0, 0.0, 0.0, 1.0, 0.0])]}
    mixture_risks(_series(), weights, R_TH, draws=3, progress=told.append)
    # Two adversaries (blind and certain), three draws each.
    assert told == [1 / 6, 2 / 6, 3 / 6, 4 / 6, 5 / 6, 1.0]


def test_scoring_one_release_gives_its_figures_of_the_whole_run() -> None:
    weights = {"certain": [np.ones(4), np.array([0.0, 0.0, 0.0, 1.0, 0.0])]}
    whole = mixture_risks(_series(), weights, R_TH, draws=6, seed=5)
    last = mixture_risks(_series(), weights, R_TH, draws=6, seed=5, scored=[1])
    # The same draws (every release is drawn either way), the one release scored.
    assert last == {name: [per_release[1]] for name, per_release in whole.items()}

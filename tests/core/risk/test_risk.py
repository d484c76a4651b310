"""The production risk model against the exact oracle (design.md §4), on random releases."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.model import PublishedCluster, PublishedRelease, Row
from app.core.risk.assess import assess_series, global_posteriors
from app.core.risk.likelihood import log_likelihood_ratio, log_likelihood_ratios
from app.core.risk.overlap import overlap_range, release_cover, release_overlap
from app.core.risk.posterior import posterior
from app.core.risk.state import SeriesState
from tests.oracle.serial_risk import likelihoods, serial_risks

ROWS = [("a",), ("b",), ("a", "b"), ("c",), ("a", "c"), ()]


@given(
    n=st.integers(1, 30),
    data=st.data(),
)
def test_log_likelihood_ratio_matches_exact_formulas_13_and_14(n: int, data: st.DataObject) -> None:
    n_s = data.draw(st.integers(0, n))
    o = data.draw(st.integers(1, n))
    r1 = data.draw(st.integers(0, min(o, n_s)))
    r2 = data.draw(st.integers(r1, min(o, n_s)))
    z = data.draw(st.integers(0, 1))
    l1, l0 = likelihoods(n_s, n, o, r1, r2, z)
    value = log_likelihood_ratio(n_s, n, o, r1, r2, z)
    if l1 == 0 and l0 == 0:
        assert math.isnan(value)
    elif l0 == 0:
        assert value == math.inf
    elif l1 == 0:
        assert value == -math.inf
    else:
        assert value == pytest.approx(math.log(l1 / l0), abs=1e-9)


def test_large_ranges_use_the_vectorised_path() -> None:
    # A whole-release overlap: 5,000 rows, 400 copies, a range of 301 values.
    l1, l0 = likelihoods(400, 5000, 2000, 100, 400, 0)
    assert log_likelihood_ratio(400, 5000, 2000, 100, 400, 0) == pytest.approx(
        math.log(l1 / l0), abs=1e-9
    )


@pytest.mark.parametrize("n", [2, 7, 12])
def test_a_range_holding_the_whole_s_range_is_no_evidence(n: int) -> None:
    # [r1, r2] = the cluster's own s-range (formula 5): the exact likelihoods are equal, and
    # both paths give exactly 0 (not a rounding of it), also for ranges too long to sum
    # term by term.
    keys = []
    for n_s in range(1, n):
        for o in range(1, n + 1):
            for z in (0, 1):
                if o - z > n - 1:
                    continue
                f1, f2 = max(n_s - (n - o), 0), min(o, n_s)
                l1, l0 = likelihoods(n_s, n, o, f1, f2, z)
                assert l1 == l0 > 0
                keys.append((n_s, n, o, f1, f2, z))
    keys.append((900, 5000, 2000, 0, 900, 1))
    # The batch first (values are cached on their key), then a key of its own one at a time.
    assert log_likelihood_ratios(keys) == [0.0] * len(keys)
    assert all(log_likelihood_ratio(*key) == 0.0 for key in keys)
    assert log_likelihood_ratio(n * 97, 6000, 3000, 0, n * 97, 0) == 0.0


def test_posterior_is_the_prior_without_evidence_and_never_divides_zero_by_zero() -> None:
    assert posterior(0.25, []) == 0.25
    assert posterior(0.25, [float("nan")]) == 0.25
    # Certain evidence against s wins over certain evidence for it (the auditor's reading).
    assert posterior(0.25, [float("inf"), float("-inf")]) == 0.0
    assert posterior(0.25, [float("inf")]) == 1.0
    assert posterior(0.25, [float("-inf")]) == 0.0
    # Odds 1e-300 * e^700 = e^9.23: no overflow, no underflow.
    odds = math.exp(math.log(1e-300) + 700)
    assert posterior(1e-300, [700.0]) == pytest.approx(odds / (1 + odds), rel=1e-9)


@st.composite
def random_releases(draw: st.DrawFn) -> list[PublishedRelease]:
    releases = []
    for number in range(1, draw(st.integers(2, 4)) + 1):
        clusters = []
        for c in range(draw(st.integers(1, 4))):
            rows = draw(st.lists(st.sampled_from(ROWS), min_size=1, max_size=6))
            counts = {s: draw(st.integers(0, len(rows))) for s in ("s", "t")}
            share = {"s": draw(st.integers(0, len(rows) - counts["s"]))}
            clusters.append(PublishedCluster(f"c{c + 1}", rows, counts, share, 0))
        bag = {"t": draw(st.integers(0, 3))}
        n = sum(len(c.rows) for c in clusters)
        totals = {s: sum(c.private_counts[s] for c in clusters) + bag.get(s, 0) for s in ("s", "t")}
        rates = {s: float(Fraction(max(k, 1), n + 3)) for s, k in totals.items()}
        releases.append(PublishedRelease(number, clusters, bag, rates))
    return releases


@settings(max_examples=150, deadline=None)
@given(random_releases())
def test_serial_risk_of_every_row_matches_the_exact_oracle(releases: list) -> None:
    exact = serial_risks(releases)
    for position, report in enumerate(assess_series(releases, r_th=2.0)):
        for row in report.rows:
            expected = max(
                (
                    float(risk)
                    for (p, cid, i, _), risk in exact.items()
                    if (p, cid, i) == (position, row.cluster_id, row.row_index)
                ),
                default=0.0,
            )
            assert row.serial_risk == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_cover_lists_overlaps_with_their_ranges() -> None:
    first = PublishedRelease(
        1,
        [PublishedCluster("c1", [("a", "f"), ("a",)], {"HIV": 1}, {}, 0)],
        {},
        {"HIV": 0.5},
    )
    second = PublishedRelease(2, [PublishedCluster("c1", [("a",), ("m",)], {}, {}, 0)], {}, {})
    (entry,) = release_cover([first, second], 0)
    assert (entry.cluster_id, entry.other_release, entry.other_cluster_id) == ("c1", 2, "c1")
    assert entry.size == 1
    assert entry.ranges == {"HIV": (0, 0)}


def _global_beta_per_pattern(state: SeriesState, j: int) -> dict[tuple[Row, str], float]:
    """β_global of each distinct row of release ``j`` and term, written for one row at a time
    (formula 12 over the other whole releases): the chosen log ratios summed in release
    order, nan skipped, certain evidence against first, then for."""
    release = state.releases[j]
    totals = release.totals()
    found: dict[tuple[Row, str], float] = {}
    for row, mult in release.row_counts.items():
        for s, n_s in totals.items():
            alpha = min(n_s / release.n, 1.0)
            total, yes, no = 0.0, False, False
            for k, other in enumerate(state.releases):
                if k == j:
                    continue
                shared = release_overlap(state, j, k)
                o = sum(shared.values())
                held = shared.get(row, 0)
                r = (
                    overlap_range(n_s, release.n, other.totals().get(s, 0), other.n, o)
                    if o
                    else None
                )
                if r is None:
                    continue
                lr = [log_likelihood_ratio(n_s, release.n, o, r[0], r[1], z) for z in (0, 1)]
                options = lr[:1] if held == 0 else lr[1:] if held == mult else lr
                feasible = [v for v in options if not math.isnan(v)]
                if not feasible:
                    continue
                v = max(feasible)
                if v == math.inf:
                    yes = True
                elif v == -math.inf:
                    no = True
                else:
                    total += v
            if alpha <= 0.0:
                beta = 0.0
            elif alpha >= 1.0:
                beta = 1.0
            elif no:
                beta = 0.0
            elif yes:
                beta = 1.0
            else:
                logit = math.log(alpha) - math.log1p(-alpha) + total
                beta = (
                    1 / (1 + math.exp(-logit))
                    if logit >= 0
                    else math.exp(logit) / (1 + math.exp(logit))
                )
            found[(row, s)] = beta
    return found


@settings(max_examples=150, deadline=None)
@given(random_releases())
def test_global_posteriors_are_the_per_row_sums_to_the_last_bit(releases: list) -> None:
    # global_posteriors sums each pattern's evidence for all patterns at once (numpy):
    # the same floats as one row at a time, not merely close ones.
    state = SeriesState.from_published(releases)
    for j in range(len(releases)):
        glob = global_posteriors(state, j)
        expected = _global_beta_per_pattern(state, j)
        got = {(row, s): b for row, p in glob.pattern_of.items() for s, b in glob.betas[p].items()}
        assert got == expected

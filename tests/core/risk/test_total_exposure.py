"""The risk to an adversary who reads the published counterfeit total.

The oracle below does not scale risks: it takes the expected counterfeits out of each cluster
(its published count, plus its even share of the rest of the total) and divides copies by the
rows left, as the adversary of docs/attacks.md reads a one-release series. With one release
there is no overlap, so the paper's posterior of a row is its cluster's share of s, and the
global composition's is the release's share (the published rate), risk 1.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.model import PublishedCluster, PublishedRelease
from app.core.risk.assess import assess_release
from app.core.risk.total_exposure import exposure_warning


def _release(
    clusters: list[tuple[int, int, int]], total: int | None, rate: float | None = None
) -> PublishedRelease:
    """One release of clusters ``(rows, copies of s, published counterfeits)``; the rows are
    one distinct set each, so nothing overlaps."""
    published = []
    for c, (n, copies, counted) in enumerate(clusters):
        rows = [(f"t{c}_{i}",) for i in range(n)]
        published.append(PublishedCluster(f"c{c + 1}", rows, {"s": copies}, {}, counted))
    n_rows = sum(n for n, _, _ in clusters)
    copies = sum(k for _, k, _ in clusters)
    return PublishedRelease(
        release_no=1,
        clusters=published,
        global_bag={},
        population_rates={"s": rate if rate is not None else copies / n_rows},
        private_terms=frozenset({"s"}),
        counterfeit_rows=total,
    )


def test_two_clusters_by_hand() -> None:
    # 5 copies in 10 rows and none in 10: rate 1/4, the first cluster's rows at risk 2. Four
    # counterfeits in no cluster's count: spread evenly, two a cluster, so 5 copies sit on 8
    # true rows: 0.625 / 0.25 = 2.5.
    release = _release([(10, 5, 0), (10, 0, 0)], total=4)
    risk = assess_release([release], 0, 2.2, with_rows=False)
    assert risk.max_serial_risk == pytest.approx(2.0)
    assert risk.rows_over_threshold == 0
    exposure = risk.published_total
    assert exposure is not None
    assert (exposure.published_total, exposure.unattributed, exposure.among) == (4, 4, 20)
    assert exposure.factor == pytest.approx(1.25)
    assert exposure.max_serial_risk == pytest.approx(2.5)
    assert exposure.rows_over_threshold == 10  # the first cluster's rows
    warning = exposure_warning(exposure, 2.2)
    assert warning is not None and warning["rows"] == "10"
    assert "counterfeit_counts" in warning["message"]
    # At r_th 2.5 the estimate is within it: nothing to warn of.
    assert exposure_warning(assess_release([release], 0, 2.5).published_total, 2.5) is None


def test_the_clusters_counts_place_part_of_the_total() -> None:
    # 6 in the total, 2 placed by the first cluster's count: 4 left among the 18 other rows.
    release = _release([(10, 5, 2), (10, 0, 0)], total=6)
    exposure = assess_release([release], 0, 8.0).published_total
    assert exposure is not None
    assert (exposure.unattributed, exposure.among) == (4, 18)
    assert exposure.factor == pytest.approx(18 / 14)


@pytest.mark.parametrize(
    ("total", "counted"),
    [(None, 0), (2, 2), (0, 0)],
    ids=["no total published", "the clusters' counts place it all", "no counterfeit"],
)
def test_nothing_to_estimate(total: int | None, counted: int) -> None:
    release = _release([(10, 5, counted), (10, 0, 0)], total=total)
    assert assess_release([release], 0, 8.0).published_total is None


@settings(max_examples=60, deadline=None)
@given(
    clusters=st.lists(
        st.integers(2, 8).flatmap(
            lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(0, n // 2))
        ),
        min_size=1,
        max_size=5,
    ),
    extra=st.integers(0, 6),
    r_th=st.sampled_from([1.2, 1.5, 2.0, 4.0]),
)
def test_the_even_spread_by_removal(
    clusters: list[tuple[int, int, int]], extra: int, r_th: float
) -> None:
    n_rows = sum(n for n, _, _ in clusters)
    copies = sum(k for _, k, _ in clusters)
    counted = sum(k for _, _, k in clusters)
    among = n_rows - counted
    if not copies or extra >= among:
        return
    release = _release(clusters, total=counted + extra)
    risk = assess_release([release], 0, r_th, with_rows=False)
    exposure = risk.published_total
    if not extra:
        assert exposure is None
        return
    assert exposure is not None
    rate = copies / n_rows
    # The oracle: each cluster loses its even share of the unattributed counterfeits (the
    # paper's adversary keeps its own count in N(C*), as the paper's posterior does), and the
    # whole release its total's share; copies over the rows left, over the published rate.
    expected: list[float] = []
    release_risk = (copies / (n_rows - extra)) / rate
    for n, k, c in clusters:
        left = n - (n - c) * extra / among
        cluster_risk = (k / left) / rate
        expected += [max(cluster_risk, release_risk)] * n
    if counted:
        # A cluster's own count keeps its rows out of the spread, so its rows lose less than
        # the share φ assumes: the estimate bounds the even spread from above.
        assert exposure.max_serial_risk >= max(expected) * (1 - 1e-9)
        return
    assert exposure.max_serial_risk == pytest.approx(max(expected))
    limit = r_th * (1 + 1e-9)
    # Rows on the threshold's edge may fall either side by rounding: allow those.
    edge = sum(1 for e in expected if abs(e - limit) < 1e-6)
    assert abs(exposure.rows_over_threshold - sum(1 for e in expected if e > limit)) <= edge

"""The repair gives a cluster of the new release its s̄-counterfeits at once.

``worst_risk_with_rows`` reads a cluster's worst serial risk as if ``m`` more rows, in no
overlap and without a private term, were in it; ``least_dilution_rows`` searches the count that
brings the cluster within ``r_th``. Both are judged here against the independent oracle
(``tests/oracle``, design.md §4 in exact fractions) on the same cluster with the rows really
added: the probe reads what the oracle reads and moves nothing, and the count found is within
``r_th`` while one row fewer is not.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.model import PublishedRelease
from app.core.perturbation.repair import least_dilution_rows, worst_risk_with_rows
from app.core.risk.overlap import cluster_cover as production_cover
from app.core.risk.state import SeriesState
from tests.core.series_strategies import FRESH, SmallSeries, anony_releases, small_series
from tests.oracle.serial_risk import canonical, cluster_cover, cluster_views, view_posterior


def _oracle_worst(
    releases: list[PublishedRelease], c: int, terms: list[str], rows: int
) -> Fraction:
    """The oracle's worst serial risk (β_cluster over the published rate) for ``terms`` in
    cluster ``c`` of the last release, with ``rows`` fresh rows added to a copy of it."""
    last = releases[-1]
    cluster = last.clusters[c]
    grown = replace(cluster, rows=[*cluster.rows, *[FRESH] * rows])
    clusters = [*last.clusters[:c], grown, *last.clusters[c + 1 :]]
    series = [*releases[:-1], replace(last, clusters=clusters)]
    views = [cluster_views(release) for release in series]
    i = len(series) - 1
    view, its_cover = views[i][c], cluster_cover(views, i, c)
    worst = Fraction(0)
    for row in {canonical(row) for row in grown.rows}:
        for s in terms:
            beta = view_posterior(view, row, s, its_cover)
            worst = max(worst, beta / Fraction(last.population_rates[s]))
    return worst


def _last_cluster(
    series: SmallSeries, data: st.DataObject
) -> tuple[list[PublishedRelease], int, int, list[str]]:
    """The series published with Anony, the last release's position, a cluster of it drawn,
    and the terms it holds that have a published rate (a risk is defined)."""
    releases = anony_releases(series)
    j = len(releases) - 1
    c = data.draw(st.integers(0, len(releases[j].clusters) - 1), label="cluster")
    cluster = releases[j].clusters[c]
    held = {s for s, k in cluster.private_counts.items() if k}
    held |= {s for s, k in cluster.global_share.items() if k}
    rates = releases[j].population_rates
    return releases, j, c, sorted(s for s in held if rates.get(s, 0) > 0)


_SETTINGS = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)


@_SETTINGS
@given(small_series(), st.data())
def test_the_probe_reads_what_the_oracle_reads_and_moves_nothing(
    series: SmallSeries, data: st.DataObject
) -> None:
    releases, j, c, terms = _last_cluster(series, data)
    rows = data.draw(st.integers(1, 6), label="rows")
    state = SeriesState.from_published(releases)
    cluster = state.cluster((j, c))
    before = (list(cluster.rows), dict(cluster.counts), dict(cluster.private_counts))
    revision = cluster.revision

    worst = worst_risk_with_rows(state, (j, c), terms, rows, production_cover(state, (j, c)))

    assert (list(cluster.rows), dict(cluster.counts), dict(cluster.private_counts)) == before
    assert cluster.revision == revision
    expected = float(_oracle_worst(releases, c, terms, rows))
    assert abs(worst - expected) <= 1e-9 * max(1.0, expected)


@_SETTINGS
@given(small_series(), st.data())
def test_the_count_found_is_within_r_th_and_one_fewer_is_not(
    series: SmallSeries, data: st.DataObject
) -> None:
    releases, j, c, terms = _last_cluster(series, data)
    r_th = data.draw(st.sampled_from([1.2, 1.5, 2.0, 3.0]), label="r_th")
    most = data.draw(st.integers(1, 40), label="most")
    state = SeriesState.from_published(releases)

    rows = least_dilution_rows(state, (j, c), terms, r_th, most)

    if rows is None:
        # Not within r_th at the largest count the search may give, nor (checked on the way)
        # at 1; the repair then goes on one row a term.
        assert _oracle_worst(releases, c, terms, most) > Fraction(r_th)
        assert _oracle_worst(releases, c, terms, 1) > Fraction(r_th)
        return
    assert 1 <= rows <= most
    assert _oracle_worst(releases, c, terms, rows) <= Fraction(r_th) * (1 + Fraction(1, 10**9))
    if rows > 1:
        assert _oracle_worst(releases, c, terms, rows - 1) > Fraction(r_th)

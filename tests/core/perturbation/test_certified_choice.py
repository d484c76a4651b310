"""The escalation's first step weighs an s-counterfeit against an s̄ one.

``worst_posterior_with_row`` reads a cluster's worst β_cluster for s as if one more row, in no
overlap, carried ``copies`` of s: the repair's ``"where_lower"`` mode compares the two readings
before it gives a pinned, certified cluster an s-counterfeit. Judged here against the
independent oracle (``tests/oracle``, design.md §4 in exact fractions) on the same cluster with
the row really added, and checked to leave the cluster as it was.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.model import PublishedRelease
from app.core.perturbation.repair import worst_posterior_with_row
from app.core.risk.state import SeriesState
from tests.core.series_strategies import FRESH, SmallSeries, anony_releases, small_series
from tests.oracle.serial_risk import canonical, cluster_cover, cluster_views, view_posterior


def _oracle_worst(releases: list[PublishedRelease], c: int, s: str, copies: int) -> Fraction:
    """The oracle's worst β_cluster for s in cluster ``c`` of the last release, with the row
    added to a copy of that release."""
    last = releases[-1]
    cluster = last.clusters[c]
    counts = dict(cluster.private_counts)
    counts[s] = counts.get(s, 0) + copies
    grown = replace(cluster, rows=[*cluster.rows, FRESH], private_counts=counts)
    clusters = [*last.clusters[:c], grown, *last.clusters[c + 1 :]]
    series = [*releases[:-1], replace(last, clusters=clusters)]
    views = [cluster_views(release) for release in series]
    i = len(series) - 1
    view, its_cover = views[i][c], cluster_cover(views, i, c)
    rows = {canonical(row) for row in grown.rows}
    return max(view_posterior(view, row, s, its_cover) for row in rows)


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(small_series(), st.data())
def test_the_probe_reads_what_the_oracle_reads_and_moves_nothing(
    series: SmallSeries, data: st.DataObject
) -> None:
    releases = anony_releases(series)
    state = SeriesState.from_published(releases)
    j = len(releases) - 1
    c = data.draw(st.integers(0, len(state.releases[j].clusters) - 1), label="cluster")
    s = data.draw(st.sampled_from(sorted(series.private_terms)), label="term")
    copies = data.draw(st.integers(0, 1), label="copies")
    cluster = state.cluster((j, c))
    before = (list(cluster.rows), dict(cluster.counts), dict(cluster.private_counts))
    revision = cluster.revision

    worst = worst_posterior_with_row(state, (j, c), s, copies)

    assert (list(cluster.rows), dict(cluster.counts), dict(cluster.private_counts)) == before
    assert cluster.revision == revision
    expected = _oracle_worst(releases, c, s, copies)
    assert abs(worst - float(expected)) <= 1e-9 * max(1.0, float(expected))

"""A series' state reads the published clusters' rows without copying them, and never changes
them (the rows of every earlier release were held twice)."""

from __future__ import annotations

import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.errors import PublicationFailed
from app.core.history import SeriesHistory
from app.core.model import PublishedRelease
from app.core.perturbation.repair import worst_posterior_with_row
from app.core.pipeline import publish
from app.core.risk.state import SeriesState
from tests.core.paper_mode import parse_params
from tests.core.series_strategies import SmallSeries, small_series


def _published(series: SmallSeries) -> list[PublishedRelease]:
    history = SeriesHistory()
    params = parse_params("sanony", {"r_th": series.r_th, "seed": 3})
    for corpus in series.corpora:
        try:
            publication = publish("sanony", history, corpus, series.private_terms, params)
        except PublicationFailed:
            continue  # nothing stored, as the service does; the series goes on without it
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
    return history.releases


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(series=small_series(), data=st.data())
def test_changes_to_the_state_leave_the_published_rows_as_they_were(
    series: SmallSeries, data: st.DataObject
) -> None:
    releases = _published(series)
    if not releases:
        return
    published = copy.deepcopy(releases)
    state = SeriesState.from_published(releases)
    # Read, not copied: the same list objects.
    assert all(
        mine.rows is theirs.rows
        for release, theirs_release in zip(state.releases, releases, strict=True)
        for mine, theirs in zip(release.clusters, theirs_release.clusters, strict=True)
    )
    pool = sorted({row for release in state.releases for row in release.row_counts})
    changed: list[tuple[int, int]] = []
    for _ in range(data.draw(st.integers(1, 6), label="changes")):
        j = data.draw(st.integers(0, len(state.releases) - 1), label="release")
        c = data.draw(st.integers(0, len(state.releases[j].clusters) - 1), label="cluster")
        if data.draw(st.booleans(), label="probe") and series.private_terms:
            s = data.draw(st.sampled_from(sorted(series.private_terms)), label="term")
            worst_posterior_with_row(state, (j, c), s, data.draw(st.integers(0, 1)))
        else:
            state.add_row((j, c), data.draw(st.sampled_from([*pool, ("fresh",)]), label="row"))
            changed.append((j, c))
    assert releases == published
    for j, c in changed:
        cluster = state.cluster((j, c))
        assert cluster.owns_rows and cluster.rows is not releases[j].clusters[c].rows
    while changed:
        state.remove_last_row(changed.pop())
    assert [[c.rows for c in r.clusters] for r in state.releases] == [
        [c.rows for c in r.clusters] for r in releases
    ]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(series=small_series(), data=st.data())
def test_rows_replaced_at_once_count_as_one_at_a_time(
    series: SmallSeries, data: st.DataObject
) -> None:
    """``set_rows`` leaves every count, the index, ``N(O)`` of whole releases and the rows
    the log names as ``set_row`` one change after the other does."""
    releases = _published(series)
    if not releases:
        return
    one, many = SeriesState.from_published(releases), SeriesState.from_published(releases)
    if len(releases) > 1:
        for state in (one, many):
            state.overlap_size(0, 1)  # N(O) of every pair kept from here on
    pool = sorted({row for release in one.releases for row in release.row_counts})
    j = data.draw(st.integers(0, len(one.releases) - 1), label="release")
    c = data.draw(st.integers(0, len(one.releases[j].clusters) - 1), label="cluster")
    n = one.cluster((j, c)).n
    changes = data.draw(
        st.lists(
            st.tuples(st.integers(0, n - 1), st.sampled_from([*pool, (), ("fresh",)])),
            max_size=12,
        ),
        label="changes",
    )
    for position, row in changes:
        one.set_row((j, c), position, row)
    many.set_rows((j, c), changes)
    for mine, theirs in zip(many.releases, one.releases, strict=True):
        assert mine.row_counts == theirs.row_counts and mine.n == theirs.n
        for a, b in zip(mine.clusters, theirs.clusters, strict=True):
            assert a.rows == b.rows and a.counts == b.counts
    assert {r: set(h) for r, h in many.index.items() if h} == {
        r: set(h) for r, h in one.index.items() if h
    }
    assert many._overlap_sizes == one._overlap_sizes
    assert set(many.row_log) <= set(one.row_log)
    before, after = releases[j].row_counts(), one.releases[j].row_counts
    moved = {row for row in set(before) | set(after) if before[row] != after.get(row, 0)}
    assert moved <= {row for _, row in many.row_log}

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

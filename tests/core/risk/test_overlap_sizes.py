"""``N(O)`` of whole releases, counted for every pair in one pass over the row index, is the
multiset intersection of the two releases' rows (section 2.3.2), before and after rows come
and go (issue 21 item 1: the pairs were counted one by one, a pass over a release's rows per
other release)."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.model import Row
from app.core.risk.state import SeriesState
from tests.core.series_strategies import SmallSeries, anony_releases, small_series


def _rows(state: SeriesState, k: int) -> Counter[Row]:
    """Release ``k``'s rows, counted from its clusters' row lists (not from the state's
    counters)."""
    return Counter(row for cluster in state.releases[k].clusters for row in cluster.rows)


def _intersection(first: Counter[Row], second: Counter[Row]) -> int:
    return sum((first & second).values())


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(series=small_series(), data=st.data())
def test_every_pair_is_the_multiset_intersection(series: SmallSeries, data: st.DataObject) -> None:
    releases = anony_releases(series)
    if len(releases) < 2:
        return
    state = SeriesState.from_published(releases)
    pool = sorted({row for release in state.releases for row in release.row_counts})
    n = len(state.releases)
    # Some pairs asked for before rows move (counted then kept up to date), the rest after.
    early = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))))
    for a, b in early:
        if a != b:
            assert state.overlap_size(a, b) == _intersection(_rows(state, a), _rows(state, b))
    added: list[tuple[int, int]] = []
    for _ in range(data.draw(st.integers(0, 8), label="changes")):
        k = data.draw(st.integers(0, n - 1), label="release")
        if added and data.draw(st.booleans(), label="take back"):
            state.remove_last_row(added.pop())
            continue
        c = data.draw(st.integers(0, len(state.releases[k].clusters) - 1), label="cluster")
        state.add_row((k, c), data.draw(st.sampled_from([*pool, ("fresh",)]), label="row"))
        added.append((k, c))
    for a in range(n):
        for b in range(n):
            if a != b:
                assert state.overlap_size(a, b) == _intersection(_rows(state, a), _rows(state, b))

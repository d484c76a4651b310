"""What the global composition reads of the published releases through their matrix of row
counts (``row_count_matrix``), against the same values written out from the
clusters' rows, before and after rows come and go:

- ``N(O)`` of whole releases, the multiset intersection of their rows (section 2.3.2): the
  pairs were counted one by one, a pass over a release's rows per other release;
- each row's pattern, its z code against every other whole release (design.md §4): a
  published release's patterns were found row by row through the index, 2 s on release 20 of
  the 20,000-row series.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.model import Row
from app.core.risk.composition import GlobalComposition
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


def _written_out(state: SeriesState, k: int) -> dict[Row, tuple[int, ...]]:
    """z = 0 where the other release lacks the row, 1 where it holds at least as many copies
    (the row is inside the overlap), 2 where fewer (either)."""
    mine = _rows(state, k)
    others = [_rows(state, o) for o in range(len(state.releases)) if o != k]
    return {
        row: tuple(0 if not other[row] else 1 if other[row] >= m else 2 for other in others)
        for row, m in mine.items()
    }


def _codes(patterns: dict[Row, bytes]) -> dict[Row, tuple[int, ...]]:
    return {row: tuple(pattern) for row, pattern in patterns.items()}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(series=small_series(), data=st.data())
def test_patterns_are_the_z_codes_written_out(series: SmallSeries, data: st.DataObject) -> None:
    releases = anony_releases(series)
    if len(releases) < 2:
        return
    state = SeriesState.from_published(releases)
    j = len(state.releases) - 1
    composition = GlobalComposition(state, j, 8.0)
    pool = sorted({row for release in state.releases for row in release.row_counts})
    # Some releases read before the newest one changes, the others after.
    early = data.draw(st.sets(st.integers(0, j)), label="read early")
    for k in sorted(early):
        assert _codes(composition.pattern_of(k)) == _written_out(state, k)
    for _ in range(data.draw(st.integers(0, 6), label="rows added")):
        c = data.draw(st.integers(0, len(state.releases[j].clusters) - 1), label="cluster")
        state.add_row((j, c), data.draw(st.sampled_from([*pool, ("fresh",)]), label="row"))
    composition.refresh()
    for k in range(j + 1):
        assert _codes(composition.pattern_of(k)) == _written_out(state, k)

"""Decoupling's search replaces rows of one series state in place and lets the global
composition take in what moved: each trial must judge exactly as building the series and
the composition from scratch with the trial's rows does (the adversary is not weakened)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.model import PublishedRelease, Row, make_row
from app.core.risk.composition import GlobalComposition
from app.core.risk.state import ClusterState, ReleaseState, SeriesState
from app.core.withholding.decoupling import _Trial, decouple
from tests.core.series_strategies import SmallSeries, anony_releases, small_series


def _from_scratch(
    published: Sequence[PublishedRelease],
    rows: Sequence[Row],
    true_totals: Mapping[str, int],
    terms: Sequence[str],
    r_th: float,
) -> bool:
    """The check as every trial once made it: the series and its composition built anew."""
    state = SeriesState.from_published(published)
    n = len(rows)
    totals = Counter({s: k for s, k in true_totals.items() if k})
    whole = ClusterState("c1", list(rows), Counter(), {}, n_true=n)
    release = ReleaseState(len(published) + 1, [whole], totals, {})
    release.rates = {s: k / n for s, k in totals.items()} if n else {}
    j = state.append(release)
    composition = GlobalComposition(state, j, r_th * (1 + 1e-9))
    composition.refresh()
    return all(composition.most_total(s, true_totals.get(s, 0)) is not None for s in terms)


def _setup(series: SmallSeries) -> tuple[list[PublishedRelease], list[Row], Counter[str]]:
    releases = anony_releases(series)
    last = series.corpora[-1]
    rows = [make_row(t.terms - series.private_terms) for t in last]
    true_totals = Counter(s for t in last for s in t.terms & series.private_terms)
    return releases[:-1], rows, true_totals


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(series=small_series(), data=st.data())
def test_each_trial_judges_as_the_series_built_anew(
    series: SmallSeries, data: st.DataObject
) -> None:
    published, rows, true_totals = _setup(series)
    terms = sorted(series.private_terms)
    candidates = [i for i, row in enumerate(rows) if row]
    trial = _Trial(published, rows, true_totals, terms, series.r_th)
    for _ in range(data.draw(st.integers(1, 6), label="trials")):
        count = data.draw(st.integers(0, len(candidates)), label="count")
        emptied = set(candidates[:count])
        trial_rows = [() if i in emptied else row for i, row in enumerate(rows)]
        expected = _from_scratch(published, trial_rows, true_totals, terms, series.r_th)
        assert trial.safe(candidates, count) == expected
        release = trial.state.releases[trial.j]
        assert release.row_counts == Counter(trial_rows)
        fresh = SeriesState.from_published(published)
        fresh.append(
            ReleaseState(
                trial.j + 1, [ClusterState("c1", trial_rows, Counter(), {})], Counter(), {}
            )
        )
        pairs = [(a, b) for b in range(len(fresh.releases)) for a in range(b)]
        assert [trial.state.overlap_size(a, b) for a, b in pairs] == [
            fresh.overlap_size(a, b) for a, b in pairs
        ]
        # The releases holding each row (a trial reads each published release as one
        # cluster, as the global composition does).
        assert {r: {k for k, _ in h} for r, h in trial.state.index.items() if h} == {
            r: {k for k, _ in h} for r, h in fresh.index.items()
        }


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(series=small_series())
def test_decoupling_finds_what_the_search_from_scratch_finds(series: SmallSeries) -> None:
    published, rows, true_totals = _setup(series)
    terms = sorted(series.private_terms)
    found = decouple(published, rows, true_totals, terms, series.r_th)
    held: Counter[Row] = Counter()
    for release in published:
        for row, k in release.row_counts().items():
            held[row] = max(held[row], k)
    mine = Counter(rows)
    candidates = sorted(
        (i for i, row in enumerate(rows) if row and mine[row] <= held.get(row, 0)),
        key=lambda i: (len(rows[i]), rows[i], i),
    )

    def safe(count: int) -> bool:
        emptied = set(candidates[:count])
        trial = [() if i in emptied else row for i, row in enumerate(rows)]
        return _from_scratch(published, trial, true_totals, terms, series.r_th)

    if not candidates or not safe(len(candidates)):
        assert found is None
        return
    low, high = 0, len(candidates)
    while high - low > 1:
        middle = (low + high) // 2
        if safe(middle):
            high = middle
        else:
            low = middle
    assert found == sorted(candidates[:high])

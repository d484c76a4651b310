"""The incremental risk equals judging the series from scratch, bit for bit.

:class:`~app.core.risk.incremental.SeriesRisk` keeps, while the newest release ``j`` is built,
what does not move: each published release's evidence from every release but ``j`` (its fixed
part), the risk of published clusters whose reading of ``j`` is unchanged, the rows of patterns.
Here a random small series (Anony, so that rows are over ``r_th``) is loaded, its newest
release changed as the repair changes it, round after round (counterfeit rows added to clusters,
some carrying a private term, copies added to the global bag, rows taken back, rates raised),
and after every change the violations it reports must equal, row for row and in order, those of
the from-scratch judgement (:func:`~app.core.risk.assess.violating_rows` of every release,
design.md §4: the new release whole, each published release's clusters with an unsafe overlap
with it, every global composition). The least lift of a term (formulas 12 and 15 over the whole
releases) must be the least count at which judging from scratch finds no row over ``r_th``.
"""

from __future__ import annotations

import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.model import PublishedRelease, Row
from app.core.params import parse_params
from app.core.risk.assess import violating_rows
from app.core.risk.incremental import SeriesRisk, Violation, unsafe_overlap
from app.core.risk.overlap import cluster_cover
from app.core.risk.state import ClusterRef, SeriesState
from tests.core.series_strategies import SmallSeries, publish_each, small_series


def _published(series: SmallSeries) -> list[PublishedRelease]:
    """The series published with Anony (no counterfeits, so rows stay over r_th); a refused
    release is left out."""
    params = parse_params("anony", {"cluster_size": series.cluster_size, "seed": 1})
    releases: list[PublishedRelease] = []
    for history in publish_each("anony", series, params):
        releases = history.releases
    return releases


def _from_scratch(state: SeriesState, j: int, r_th: float) -> list[Violation]:
    """Every violation of the series judged anew, in the order SeriesRisk reports them."""
    found = violating_rows(state, j, r_th)
    unsafe: set[ClusterRef] = set()
    for c, cluster in enumerate(state.releases[j].clusters):
        for overlap in cluster_cover(state, (j, c), releases=range(j)):
            if unsafe_overlap(cluster, state.cluster(overlap.other), overlap.size):
                unsafe.add(overlap.other)
    for k in range(len(state.releases)):
        if k != j:
            refs = sorted(c for release, c in unsafe if release == k)
            found.extend(violating_rows(state, k, r_th, refs))
    return found


def _global_over(state: SeriesState, s: str, r_th: float) -> bool:
    """Whether judging from scratch puts some row of some release over r_th for s through
    the global composition."""
    return any(
        v[2] == s and v[4] == "global"
        for k in range(len(state.releases))
        for v in violating_rows(state, k, r_th, ())
    )


def _least_from_scratch(
    state: SeriesState, j: int, s: str, start: int, stop: int, r_th: float
) -> int | None:
    """The least count of s in release ``j`` (the global bag taking the difference, the rate
    following the count, as ``least_total`` asks) that judging from scratch accepts."""
    for c in range(start, stop + 1):
        trial = copy.deepcopy(state)
        release = trial.releases[j]
        release.global_bag[s] += c - release.total(s)
        release.rates[s] = c / release.n
        if not _global_over(trial, s, r_th):
            return c
    return None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(series=small_series(), data=st.data())
def test_incremental_violations_equal_judging_from_scratch(
    series: SmallSeries, data: st.DataObject
) -> None:
    releases = _published(series)
    if len(releases) < 2:
        return
    state = SeriesState.from_published(releases)
    j = len(state.releases) - 1
    new = state.releases[j]
    risk = SeriesRisk(state, j, series.r_th)
    terms = sorted(series.private_terms)
    # Rows of every release, so that added rows make and end overlaps, and fresh ones.
    pool: list[Row] = sorted({row for release in state.releases for row in release.row_counts})
    pool += [("fresh1",), ("fresh2",)]
    added: list[tuple[int, str | None]] = []
    assert risk.violations() == _from_scratch(state, j, series.r_th)
    for _ in range(data.draw(st.integers(1, 12), label="rounds")):
        for _ in range(data.draw(st.integers(1, 4), label="changes")):
            kind = data.draw(st.sampled_from(["row", "s-row", "bag", "back", "rate"]))
            c = data.draw(st.integers(0, len(new.clusters) - 1), label="cluster")
            s = data.draw(st.sampled_from(terms), label="term")
            if kind in ("row", "s-row"):
                state.add_row((j, c), data.draw(st.sampled_from(pool), label="row"))
                carried = s if kind == "s-row" else None
                if carried is not None:
                    new.clusters[c].private_counts[carried] += 1
                added.append((c, carried))
            elif kind == "bag":
                new.global_bag[s] += 1
            elif kind == "back" and added:
                c, carried = added.pop()
                state.remove_last_row((j, c))
                if carried is not None:
                    new.clusters[c].private_counts[carried] -= 1
            elif kind == "rate" and new.n:
                new.rates[s] = max(new.rates.get(s, 0.0), new.total(s) / new.n)
        assert risk.violations() == _from_scratch(state, j, series.r_th)
        s = data.draw(st.sampled_from(terms), label="lifted")
        start = new.total(s)
        assert risk.least_total(s, start, start + 4) == _least_from_scratch(
            state, j, s, start, start + 4, series.r_th
        )

"""Counterfeit transactions (Definition 14)."""

from __future__ import annotations

from collections import Counter

from app.core.perturbation.counterfeit import CounterfeitFactory
from app.core.risk.state import ClusterState, ReleaseState, SeriesState


def _state(rows: list[tuple[str, ...]], other: list[tuple[str, ...]]) -> SeriesState:
    old = ReleaseState(
        1, [ClusterState("c1", other, Counter(), {}, n_true=len(other))], Counter(), {}
    )
    new = ReleaseState(
        2, [ClusterState("c1", rows, Counter(), {}, n_true=len(rows))], Counter(), {}
    )
    return SeriesState([old, new])


def test_a_counterfeit_is_built_from_the_cluster_terms_and_is_no_row_of_it() -> None:
    rows = [("a", "b"), ("a", "c"), ("a",), ("b", "c")]
    state = _state(rows, [("zz",)])
    factory = CounterfeitFactory(state, 1, Counter({"a": 3, "b": 2, "c": 2}), seed=1)
    cluster = state.releases[1].clusters[0]
    made = [factory.make(0, cluster) for _ in range(3)]
    for row in made:
        assert row not in rows
        assert set(row) <= {"a", "b", "c"}
        assert row  # at least one term
    assert all(len(row) == 1 for row in made[:2])  # minimal size first: ("b",), ("c",)


def test_a_counterfeit_avoids_rows_other_releases_hold_when_it_can() -> None:
    rows = [("a", "b")]
    state = _state(rows, [("a",), ("b",), ("q", "z")])
    factory = CounterfeitFactory(state, 1, Counter({"a": 1, "b": 1}), seed=3)
    row = factory.make(0, state.releases[1].clusters[0])
    # ("a",) and ("b",) would overlap release 1; ("a", "b") is the cluster's own row: the
    # cluster's and the corpus' terms give nothing fresh, so the series' terms are used.
    assert row in {("q",), ("z",)}


def test_seeded_counterfeits_are_reproducible() -> None:
    def make(seed: int) -> list[tuple[str, ...]]:
        state = _state([("a", "b", "c", "d")], [("x",)])
        factory = CounterfeitFactory(state, 1, Counter("abcd"), seed=seed)
        cluster = state.releases[1].clusters[0]
        out = []
        for _ in range(4):
            row = factory.make(0, cluster)
            state.add_row((1, 0), row)
            out.append(row)
        return out

    assert make(5) == make(5)
    assert len(set(make(5))) == 4

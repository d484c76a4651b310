"""Counterfeit transactions (Definition 14).

The tests before the twins' (``twins=False``) test Definition 14's fresh rows, which a
counterfeit is whenever no true row of its cluster can be repeated (``counterfeits: fresh``, or
no template whose repetition leaves every overlap as it is)."""

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
    factory = CounterfeitFactory(state, 1, Counter({"a": 3, "b": 2, "c": 2}), seed=1, twins=False)
    cluster = state.releases[1].clusters[0]
    made = [factory.make(0, cluster) for _ in range(3)]
    for row in made:
        assert row not in rows
        assert set(row) <= {"a", "b", "c"}
        assert row  # at least one term
    # Sizes follow the cluster's rows (1 or 2 terms), one more when no fresh row of the
    # drawn size is left (every pair is a row): ("b",), ("c",) or ("a", "b", "c").
    assert {len(row) for row in made} <= {1, 3}


def test_a_counterfeit_avoids_rows_other_releases_hold_when_it_can() -> None:
    rows = [("a", "b")]
    state = _state(rows, [("a",), ("b",), ("q", "z")])
    factory = CounterfeitFactory(state, 1, Counter({"a": 1, "b": 1}), seed=3, twins=False)
    row = factory.make(0, state.releases[1].clusters[0])
    # ("a",) and ("b",) would overlap release 1; ("a", "b") is the cluster's own row: the
    # cluster's and the corpus' terms give nothing fresh, so the series' terms are used.
    assert row in {("q",), ("z",)}


def test_seeded_counterfeits_are_reproducible() -> None:
    def make(seed: int) -> list[tuple[str, ...]]:
        state = _state([("a", "b", "c", "d")], [("x",)])
        factory = CounterfeitFactory(state, 1, Counter("abcd"), seed=seed, twins=False)
        cluster = state.releases[1].clusters[0]
        out = []
        for _ in range(4):
            row = factory.make(0, cluster)
            state.add_row((1, 0), row)
            out.append(row)
        return out

    assert make(5) == make(5)
    assert len(set(make(5))) == 4


def _synthetic(seed: int) -> tuple[SeriesState, list[tuple[str, ...]]]:
    """A cluster of 40 true rows of 1 to 8 terms drawn from 4 topics of 12 terms each (terms
    of one topic go together), and an earlier release holding some of its singletons."""
    import random

    rng = random.Random(seed)
    topics = [[f"t{k}w{i}" for i in range(12)] for k in range(4)]
    rows = []
    for _ in range(40):
        topic = rng.choice(topics)
        rows.append(tuple(sorted(rng.sample(topic, rng.choice([1, 1, 2, 3, 5, 8])))))
    return _state(rows, [(t,) for t in topics[0][:6]]), rows


def test_counterfeit_sizes_follow_the_cluster_rows_sizes() -> None:
    # Counterfeits of the minimal size were told apart by size alone (AUC
    # 0.996 on sentences). Their sizes must follow the cluster's true rows.
    from app.core.attacks.anony_measures import auc

    made: list[tuple[str, ...]] = []
    true_sizes: list[float] = []
    for seed in range(6):
        state, rows = _synthetic(seed)
        factory = CounterfeitFactory(
            state, 1, Counter(t for r in rows for t in r), seed=seed, twins=False
        )
        cluster = state.releases[1].clusters[0]
        for _ in range(15):
            row = factory.make(0, cluster)
            assert row and row not in rows  # Definition 14: no row of the cluster
            assert set(row) <= {t for r in rows for t in r}  # the cluster's terms
            state.add_row((1, 0), row)
            made.append(row)
        true_sizes += [float(len(r)) for r in rows]
    area = auc([float(len(r)) for r in made], true_sizes)
    assert 0.4 <= area <= 0.6, area  # the sizes cannot tell them apart (either direction)


def test_counterfeit_terms_go_together_like_a_true_row() -> None:
    # Counterfeits follow the corpus' co-occurrence: a counterfeit of several terms draws
    # them from one topic, as the true rows do, not across topics.
    state, rows = _synthetic(7)
    factory = CounterfeitFactory(state, 1, Counter(t for r in rows for t in r), seed=7, twins=False)
    cluster = state.releases[1].clusters[0]
    mixed = total = 0
    for _ in range(30):
        row = factory.make(0, cluster)
        state.add_row((1, 0), row)
        if len(row) > 1:
            total += 1
            mixed += len({t.split("w")[0] for t in row}) > 1
    assert total and mixed / total <= 0.2, (mixed, total)

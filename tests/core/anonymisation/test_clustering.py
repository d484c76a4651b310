"""Clustering (design.md §2.1): a deterministic partition into runs of similar rows."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.core.anonymisation.clustering import frequency_order_clusters, label_clusters

rows_strategy = st.lists(
    st.lists(st.sampled_from("abcdefgh"), max_size=4).map(lambda t: tuple(sorted(set(t)))),
    min_size=1,
    max_size=80,
)


@given(rows_strategy, st.integers(1, 12))
def test_clusters_form_a_partition_of_at_least_cluster_size(rows: list, size: int) -> None:
    clusters = frequency_order_clusters(rows, size)
    assert sorted(i for c in clusters for i in c) == list(range(len(rows)))
    if len(rows) >= size:
        assert all(len(c) >= size for c in clusters)
        assert all(len(c) < 2 * size for c in clusters)
    else:
        assert len(clusters) == 1


@given(rows_strategy, st.integers(1, 12))
def test_clustering_is_deterministic_and_groups_identical_sets(rows: list, size: int) -> None:
    first = frequency_order_clusters(rows, size)
    assert first == frequency_order_clusters(list(rows), size)
    # Identical sets are neighbours in the order, so a set spans consecutive clusters only.
    where: dict[tuple, list[int]] = {}
    for c, members in enumerate(first):
        for i in members:
            where.setdefault(rows[i], []).append(c)
    for clusters_of_set in where.values():
        span = sorted(set(clusters_of_set))
        assert span == list(range(span[0], span[-1] + 1))


def test_frequent_terms_lead_the_order() -> None:
    rows = [("x",), ("a", "b"), ("a",), ("a", "c"), ("x",), ("a", "b")]
    assert frequency_order_clusters(rows, 2) == [[2, 1], [5, 3], [0, 4]]


def test_client_labels_keep_their_first_appearance_order() -> None:
    assert label_clusters(["b", "a", "b", "c", "a"]) == [[0, 2], [1, 4], [3]]

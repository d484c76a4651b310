"""Anony (design.md §2): sanitisation keeps every cluster within r_th, refining is seeded."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.anonymisation.anony import anonymise, global_shares

PRIVATE = ("s1", "s2", "s3")


@st.composite
def partitioned_corpora(draw: st.DrawFn) -> tuple[list, list, list[list[int]], float]:
    n = draw(st.integers(2, 70))
    private_sets = [
        frozenset(draw(st.lists(st.sampled_from(PRIVATE), max_size=2))) for _ in range(n)
    ]
    rows = [(f"r{i % 7}",) for i in range(n)]
    size = draw(st.integers(1, 8))
    partition = [list(range(i, min(i + size, n))) for i in range(0, n, size)]
    return rows, private_sets, partition, draw(st.floats(1, 10))


def _gamma(n_c: int, copies: int, total: int, n_rows: int) -> float:
    return (copies / n_c) / (total / n_rows)


@given(partitioned_corpora(), st.integers(0, 5))
def test_every_cluster_is_s_preserving_and_no_copy_is_lost(case: tuple, seed: int) -> None:
    rows, private_sets, partition, r_th = case
    result = anonymise(rows, private_sets, partition, r_th, seed)
    n_rows = len(rows)
    totals = Counter(s for p in private_sets for s in p)
    for s, total in totals.items():
        kept = sum(c.private_counts.get(s, 0) for c in result.clusters)
        assert kept + result.global_bag.get(s, 0) == total
        for cluster in result.clusters:
            copies = cluster.private_counts.get(s, 0) + cluster.global_share.get(s, 0)
            assert copies <= len(cluster.rows)
            assert _gamma(len(cluster.rows), copies, total, n_rows) <= r_th * (1 + 1e-9)
        assert result.rates[s] == pytest.approx(total / n_rows)


@given(partitioned_corpora())
def test_refining_leaves_no_cluster_that_could_take_a_copy(case: tuple) -> None:
    rows, private_sets, partition, r_th = case
    result = anonymise(rows, private_sets, partition, r_th, 3)
    n_rows = len(rows)
    totals = Counter(s for p in private_sets for s in p)
    sizes = np.array([len(c.rows) for c in result.clusters])
    for s, in_bag in result.global_bag.items():
        share_after = global_shares(sizes, in_bag - 1, n_rows)
        for i, cluster in enumerate(result.clusters):
            copies = cluster.private_counts.get(s, 0) + 1 + int(share_after[i])
            fits = copies <= len(cluster.rows) and _gamma(
                len(cluster.rows), copies, totals[s], n_rows
            ) <= r_th * (1 - 1e-9)
            assert not fits, f"cluster {i} could still take a copy of {s}"


def test_the_refining_order_is_one_seeded_permutation_for_every_term() -> None:
    # Cluster 0 holds two copies of s and two of t but may keep one of each (r_th 1.5,
    # population rate 1/6, clusters of 4 rows: 1.5 * 4 / 6 = 1 copy). The copy each term
    # sends to the bag comes back to the first cluster of the seeded order that can take it:
    # the same cluster for s and t, and a different one for different seeds.
    rows = [("a",)] * 12
    partition = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
    private = [frozenset({"s", "t"})] * 2 + [frozenset()] * 10
    winners = set()
    for seed in range(12):
        result = anonymise(rows, private, partition, 1.5, seed)
        by_term = {
            term: tuple(c.private_counts.get(term, 0) for c in result.clusters)
            for term in ("s", "t")
        }
        assert by_term["s"] == by_term["t"]
        assert by_term["s"][0] == 1 and sum(by_term["s"]) == 2
        winners.add(by_term["s"])
    assert winners == {(1, 1, 0), (1, 0, 1)}


def test_rounding_of_the_global_share_never_breaks_the_guarantee() -> None:
    # Three clusters of one row, two copies in the bag: J = round(2/3) = 1 would give every
    # cluster gamma = 1.5 > r_th = 1; the published share is capped at 0.
    result = anonymise(
        [("a",), ("b",), ("c",)],
        [frozenset(), frozenset({"s"}), frozenset({"s"})],
        [[0], [1], [2]],
        1.0,
        0,
    )
    assert result.global_bag == {"s": 2}
    assert [c.global_share for c in result.clusters] == [{}, {}, {}]


def test_global_share_rounds_half_to_even() -> None:
    # 1 * 3 / 6 = 0.5 -> 0 and 3 * 3 / 6 = 1.5 -> 2 (Python's and numpy's round).
    assert global_shares(np.array([1, 3]), 3, 6).tolist() == [0, 2]


def _refined_one_copy_at_a_time(
    private_sets: list, partition: list[list[int]], r_th: float, seed: int
) -> dict[str, list[int]]:
    """The paper's sanitisation and refining written out plainly (oracle): copies leave every
    violating cluster for the bag until none violates, then come back one at a time, visiting
    the clusters in the seeded order again and again until a whole pass moves nothing."""
    from app.core.randomness import mechanism_random

    n_rows = sum(len(members) for members in partition)
    sizes = [len(members) for members in partition]
    order = list(range(len(partition)))
    mechanism_random(str(seed), "refine").shuffle(order)
    result = {}
    for s in sorted({s for p in private_sets for s in p}):
        counts = [sum(s in private_sets[i] for i in members) for members in partition]
        total = sum(counts)
        limit = [r_th * total * size / n_rows for size in sizes]
        allowed = [min(int(np.floor(x + 1e-9)), size) for x, size in zip(limit, sizes, strict=True)]

        def share(size: int, bag: int) -> int:
            return round(size * bag / n_rows)

        bag = 0
        while True:
            excess = [
                max(k - max(a - share(size, bag), 0), 0)
                for k, a, size in zip(counts, allowed, sizes, strict=True)
            ]
            if not any(excess):
                break
            counts = [k - e for k, e in zip(counts, excess, strict=True)]
            bag += sum(excess)
        moved = True
        while moved and bag:
            moved = False
            for c in order:
                while bag and (
                    counts[c] + share(sizes[c], bag) < limit[c] - 1e-9
                    and counts[c] + 1 + share(sizes[c], bag - 1) <= allowed[c]
                ):
                    counts[c] += 1
                    bag -= 1
                    moved = True
        result[s] = [*counts, bag]
    return result


@st.composite
def uneven_partitions(draw: st.DrawFn) -> tuple[list, list, list[list[int]], float]:
    """Clusters of 1 to 40 rows and private terms on most rows: bags large enough that
    ``J_s`` is not 0 everywhere, so refining takes its sequential path."""
    sizes = draw(st.lists(st.integers(1, 40), min_size=2, max_size=25))
    n = sum(sizes)
    weights = draw(st.lists(st.floats(0.05, 0.95), min_size=3, max_size=3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    private_sets = [
        frozenset(s for s, w in zip(PRIVATE, weights, strict=True) if rng.random() < w)
        for _ in range(n)
    ]
    starts = np.cumsum([0, *sizes])
    partition = [list(range(int(a), int(b))) for a, b in zip(starts[:-1], starts[1:], strict=True)]
    return [("r",)] * n, private_sets, partition, draw(st.floats(1, 6))


@given(uneven_partitions(), st.integers(0, 5))
def test_refining_moves_the_copies_the_paper_moves_one_at_a_time(case: tuple, seed: int) -> None:
    # The production refine jumps between clusters by their thresholds (largest bag from which
    # each takes a copy), solved in real numbers and then checked; the oracle walks copy by
    # copy. They must leave every cluster with the same copies and the same bag.
    rows, private_sets, partition, r_th = case
    result = anonymise(rows, private_sets, partition, r_th, seed)
    expected = _refined_one_copy_at_a_time(private_sets, partition, r_th, seed)
    for s, counts in expected.items():
        got = [c.private_counts.get(s, 0) for c in result.clusters]
        assert [*got, result.global_bag.get(s, 0)] == counts, s

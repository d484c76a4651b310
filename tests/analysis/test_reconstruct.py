"""Random reconstruction (Definition 4) on a hand-made release."""

from __future__ import annotations

import random
from collections import Counter

from app.analysis.reader import parse_release
from app.analysis.reconstruct import basket_frame, reconstruct, reconstruct_cluster
from tests.analysis.sample import release_doc


def test_each_cluster_gets_exactly_its_copies_on_distinct_rows() -> None:
    release = parse_release(release_doc())
    for seed in range(20):
        baskets = reconstruct(release, seed)
        assert len(baskets) == 6
        c1, c2 = baskets[:4], baskets[4:]
        assert Counter(t for b in c1 for t in b if t in {"HIV", "flu"}) == {"HIV": 3}
        assert Counter(t for b in c2 for t in b if t in {"HIV", "flu"}) == {"HIV": 1, "flu": 1}
        assert [b[: len(r)] for b, r in zip(c1, release.clusters[0].rows, strict=True)] == [
            list(r) for r in release.clusters[0].rows
        ]


def test_a_seed_gives_the_same_baskets_and_seeds_differ() -> None:
    release = parse_release(release_doc())
    assert reconstruct(release, 7) == reconstruct(release, 7)
    assert len({str(reconstruct(release, seed)) for seed in range(30)}) > 1


def test_a_count_larger_than_the_cluster_fills_it() -> None:
    doc = release_doc()
    doc["clusters"][1]["private_terms"] = {"HIV": 5}
    cluster = parse_release(doc).clusters[1]
    assert all("HIV" in b for b in reconstruct_cluster(cluster, random.Random(0)))


def test_the_basket_frame_is_one_hot() -> None:
    frame = basket_frame([["a", "HIV"], ["b"], []])
    assert list(frame.columns) == ["HIV", "a", "b"]
    assert frame.to_numpy().tolist() == [[True, True, False], [False, False, True], [False] * 3]

"""Random reconstruction (Definition 4) on a hand-made release."""

from __future__ import annotations

import random
from collections import Counter

from app.analysis.reader import parse_release
from app.analysis.reconstruct import basket_frame, basket_table, reconstruct, reconstruct_cluster
from tests.analysis.sample import release_doc


def test_each_cluster_gets_its_copies_and_the_bag_the_rest() -> None:
    release = parse_release(release_doc())
    for seed in range(20):
        baskets = reconstruct(release, seed)
        assert len(baskets) == 6
        c1, c2 = baskets[:4], baskets[4:]
        # N(HIV, C*) = 3 in c1 and 1 in c2; the bag's 2 copies less the share of 1 leave 1
        # more for one of the rows without HIV
        assert Counter(t for b in baskets for t in b if t in {"HIV", "flu"}) == {
            "HIV": 5,
            "flu": 1,
        }
        assert sum("HIV" in b for b in c1) >= 3 and sum("HIV" in b for b in c2) >= 1
        assert all(len(set(b)) == len(b) for b in baskets)
        assert [b[: len(r)] for b, r in zip(c1, release.clusters[0].rows, strict=True)] == [
            list(r) for r in release.clusters[0].rows
        ]


def test_a_bag_no_share_places_is_spread_over_the_release() -> None:
    doc = release_doc()
    for cluster in doc["clusters"]:
        cluster.update(private_terms={}, global_share={})
    doc["global_bag"] = {"HIV": 4}
    release = parse_release(doc)
    held = [sum("HIV" in b for b in reconstruct(release, seed)) for seed in range(50)]
    assert held == [4] * 50
    rows = Counter(
        i for seed in range(50) for i, b in enumerate(reconstruct(release, seed)) if "HIV" in b
    )
    assert set(rows) == set(range(6))  # any row may receive a copy


def test_the_basket_table_keeps_every_row_and_its_place() -> None:
    doc = release_doc()
    doc["clusters"][1]["rows"] = [[], ["whole milk"]]
    table = basket_table([parse_release(doc)], seed=3)
    assert list(table.columns) == ["release_no", "cluster_id", "row", "items"]
    assert len(table) == 6 and list(table.row) == [0, 1, 2, 3, 0, 1]
    assert table["items"].iloc[5][0] == "whole milk"
    assert [tuple(b) for b in reconstruct(parse_release(doc), 3)] == list(table["items"])


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

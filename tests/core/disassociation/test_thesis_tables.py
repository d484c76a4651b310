"""Disassociation reproduces the thesis's worked examples (Tables 3.1-3.8), literally."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.core.disassociation import (
    DisassociationParams,
    disassociate,
    horizontal_partition,
    most_frequent_term,
    split_by_term,
    tlost,
    vertical_partition,
)
from tests.core.disassociation.thesis_examples import P1, P2, corpus

RECORDS = [frozenset(r) for r in P1]


def test_table_3_1_the_split_on_lung_leaves_one_record_below_k() -> None:
    # The thesis splits on lung, one of four terms of support 3; ties go to the smallest term.
    assert most_frequent_term(RECORDS, range(4), frozenset()) == "blood"
    assert split_by_term(RECORDS, range(4), "lung") == ([0, 1, 3], [2])


@pytest.mark.parametrize(
    ("strategy", "clusters", "suppressed"),
    [
        ("adding", [[1, 2, 3, 0]], []),  # Table 3.2: the four records in one cluster
        ("remaining_list", [[1, 2, 3, 0]], []),  # the list of one is below k: line 22
        ("suppression", [[1, 2, 3]], [0]),  # Algorithm 1, line 6
    ],
)
def test_table_3_2_small_cluster_strategies(
    strategy: str, clusters: list[list[int]], suppressed: list[int]
) -> None:
    params = DisassociationParams(k=2, max_cluster_size=4, strategy=strategy)  # type: ignore[arg-type]
    result = horizontal_partition(RECORDS, params)
    assert (result.clusters, result.suppressed) == (clusters, suppressed)


def test_table_3_3_record_chunks_and_term_chunk() -> None:
    release = disassociate(corpus(*P1), DisassociationParams(k=2, m=2)).public()
    assert release.to_json()["clusters"] == [
        {
            "id": "P1",
            "size": 4,
            "record_chunks": [
                [
                    ["blood", "cancer", "lung"],
                    ["blood", "cancer", "treatment"],
                    ["blood", "lung", "treatment"],
                    ["cancer", "lung", "treatment"],
                ],
                [["biopsy", "tumor"], ["biopsy", "tumor"]],
            ],
            "term_chunk": ["catheterisation", "radiotherapy", "vessel"],
        }
    ]


@pytest.mark.parametrize(
    ("method", "chunks"),
    [
        # Table 3.7 (first method): surgery and failure never occur together, so each needs
        # its own chunk (the thesis lists surgery first; ties go to the smallest term).
        ("all_combinations", [{"infection", "kidney"}, {"failure"}, {"surgery"}]),
        # Table 3.8 (second method): they share one chunk.
        ("shared", [{"infection", "kidney"}, {"failure", "surgery"}]),
    ],
)
def test_tables_3_7_and_3_8_two_readings_of_km(method: str, chunks: list[set[str]]) -> None:
    found, term_chunk = vertical_partition([frozenset(r) for r in P2], 2, 2, method)  # type: ignore[arg-type]
    assert found == [frozenset(c) for c in chunks]
    assert term_chunk == {"catheterisation", "dialysis", "sepsis"}


def test_tables_3_5_and_3_6_refining_shares_catheterisation() -> None:
    params = DisassociationParams(k=2, m=2, vertical="all_combinations")
    both = corpus(*P1, *P2)
    split = [[0, 1, 2, 3], [4, 5, 6, 7]]
    unrefined = disassociate(both, replace(params, refine=False), split)
    assert [c.term_chunk for c in unrefined.public().clusters] == [  # Table 3.5
        ("catheterisation", "radiotherapy", "vessel"),
        ("catheterisation", "dialysis", "sepsis"),
    ]
    layout = disassociate(both, params, split).public().to_json()
    assert layout["clusters"][1] == {  # Table 3.6, cluster P2
        "id": "P2",
        "size": 4,
        "record_chunks": [
            [["infection"], ["infection", "kidney"], ["infection", "kidney"], ["kidney"]],
            [["failure"], ["failure"]],
            [["surgery"], ["surgery"]],
        ],
        "term_chunk": ["dialysis", "sepsis"],
    }
    assert layout["clusters"][0]["term_chunk"] == ["radiotherapy", "vessel"]
    assert layout["joint_clusters"] == [
        {"clusters": ["P1", "P2"], "shared_chunks": [[["catheterisation"], ["catheterisation"]]]}
    ]


def test_tlost_counts_frequent_terms_left_in_term_chunks() -> None:
    # Support >= 2 over P1+P2 and in a term chunk after refining: none (catheterisation was
    # shared); without refining, catheterisation is lost: 1 of the 11 frequent terms.
    both = corpus(*P1, *P2)
    split = [[0, 1, 2, 3], [4, 5, 6, 7]]
    refined = disassociate(both, DisassociationParams(k=2), split)
    unrefined = disassociate(both, DisassociationParams(k=2, refine=False), split)
    assert tlost(both, refined) == 0.0
    assert tlost(both, unrefined) == pytest.approx(1 / 11)

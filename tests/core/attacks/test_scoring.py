"""Scoring stage: offline NGD (formula 4.1) and skip-gram embeddings."""

from __future__ import annotations

import math

import numpy as np
import pytest

from app.core.attacks.scoring import CooccurrenceRelatedness, EmbeddingRelatedness, ngd
from tests.core.attacks.topics import world


@pytest.mark.parametrize(
    ("f_x", "f_y", "f_xy", "n", "expected"),
    [
        (10, 10, 10, 1000, 0.0),  # always together
        (10, 10, 5, 1000, math.log(2) / math.log(100)),
        (100, 10, 10, 1000, math.log(10) / math.log(100)),
        (10, 10, 0, 1000, math.inf),  # never together
        (1000, 1000, 1000, 1000, 0.0),  # in every transaction: no information
    ],
)
def test_formula_4_1(f_x: int, f_y: int, f_xy: int, n: int, expected: float) -> None:
    assert ngd(f_x, f_y, f_xy, n) == pytest.approx(expected)


def test_cooccurrence_matrix_agrees_with_formula_4_1_pair_by_pair() -> None:
    background = [t.terms for t in world(300, 1)]
    relatedness = CooccurrenceRelatedness(background)
    terms = ["cough", "fever", "arson", "hiv", "unknown"]
    block = relatedness.matrix(terms, terms)
    n = len(background)
    for i, x in enumerate(terms):
        for j, y in enumerate(terms):
            f_x = sum(x in b for b in background)
            f_y = sum(y in b for b in background)
            f_xy = sum(x in b and y in b for b in background)
            assert block[i, j] == pytest.approx(1 / (1 + ngd(f_x, f_y, f_xy, n)))
    assert block[0, 3] > block[2, 3]  # cough goes with hiv more than arson does


def test_embeddings_are_seeded_and_learn_the_topics() -> None:
    sentences = [sorted(t.terms) for t in world(600, 2)]
    first = EmbeddingRelatedness(sentences, seed=7, window=8, sample=0, vector_size=32)
    again = EmbeddingRelatedness(sentences, seed=7, window=8, sample=0, vector_size=32)
    terms = ["cough", "fever", "nurse", "arson", "theft", "court", "hiv", "parole"]
    block = first.matrix(terms, terms)
    assert np.array_equal(block, again.matrix(terms, terms))
    within = np.mean([block[0, 1], block[0, 2], block[3, 4], block[3, 5], block[6, 0]])
    across = np.mean([block[0, 3], block[1, 4], block[2, 5], block[6, 3], block[7, 0]])
    assert within > across + 0.2
    assert first.matrix(["cough"], ["never-seen"]).tolist() == [[0.0]]


def test_pairs_agree_with_the_matrix() -> None:
    sentences = [sorted(t.terms) for t in world(300, 3)]
    left = ["cough", "arson", "hiv", "nope", "fever"]
    right = ["fever", "hiv", "parole", "cough", "fever"]
    for relatedness in (
        CooccurrenceRelatedness(sentences),
        EmbeddingRelatedness(sentences, seed=1, window=8, sample=0, vector_size=16),
    ):
        block = relatedness.matrix(left, right)
        assert relatedness.pairs(left, right) == pytest.approx(np.diag(block))

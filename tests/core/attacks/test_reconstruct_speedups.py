"""The attack's speed-ups change no result: the bulk tie-break draws are ``rng.random()``'s
stream, and the gain matrix of the ground-truth matching counts the same intersections."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.attacks.breakage import _gain
from app.core.attacks.reconstruct import _Draws

TERMS = [f"t{i}" for i in range(12)]


@given(st.text(max_size=20), st.lists(st.integers(0, 700), max_size=6))
@settings(max_examples=40, deadline=None)
def test_bulk_draws_are_the_python_stream(seed: str, sizes: list[int]) -> None:
    reference = random.Random(seed)
    bulk = _Draws(random.Random(seed), bulk=True)
    plain = _Draws(random.Random(seed), bulk=False)
    for n in sizes:
        expected = np.array([reference.random() for _ in range(n)])
        assert np.array_equal(bulk.take(n), expected)
        assert np.array_equal(plain.take(n), expected)


sets = st.frozensets(st.sampled_from(TERMS), max_size=6)


@given(st.lists(sets, min_size=1, max_size=14), st.lists(sets, min_size=1, max_size=14))
@settings(max_examples=80, deadline=None)
def test_gain_counts_the_intersections(
    truths: list[frozenset[str]], added: list[frozenset[str]]
) -> None:
    expected = [[len(a & t) for a in added] for t in truths]
    gain = _gain(truths, added)
    assert gain.dtype == np.int64
    assert gain.tolist() == expected

"""Formulas 13-14 summed in bounded batches give the values of one batch, to the last bit, and
the log-factorial tables grow to exactly the functions' values (memory at
10,000,000 rows)."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import gammaln

from app.core.risk import likelihood
from app.core.risk.likelihood import RatioKey, log_likelihood_ratios


@st.composite
def ratio_keys(draw: st.DrawFn) -> RatioKey:
    n = draw(st.integers(2, 3000))
    n_s = draw(st.integers(0, n))
    o = draw(st.integers(1, n))
    top = min(o, n_s)
    r1 = draw(st.integers(0, top))
    r2 = draw(st.integers(r1, top))
    return (n_s, n, o, r1, r2, draw(st.integers(0, 1)))


@contextlib.contextmanager
def _batch_terms(size: int) -> Iterator[None]:
    old = likelihood._BATCH_TERMS
    likelihood._BATCH_TERMS = size
    try:
        yield
    finally:
        likelihood._BATCH_TERMS = old


def _bits(values: list[float]) -> list[str]:
    # nan != nan: compare the values' exact representations instead.
    return [float.hex(v) for v in values]


@settings(max_examples=60, deadline=None)
@given(keys=st.lists(ratio_keys(), min_size=1, max_size=40), batch=st.integers(1, 400))
def test_batches_of_any_size_give_the_values_of_one_batch(keys: list[RatioKey], batch: int) -> None:
    likelihood._cache.clear()
    whole = log_likelihood_ratios(keys)
    likelihood._cache.clear()
    with _batch_terms(batch):
        batched = log_likelihood_ratios(keys)
    likelihood._cache.clear()
    assert _bits(batched) == _bits(whole)


def test_a_batch_holds_at_most_its_terms_or_one_longer_key() -> None:
    keys: list[RatioKey] = [(9, 99, 50, 0, 4, 0)] * 3 + [(500, 900, 800, 0, 499, 1)]
    assert [len(b) for b in likelihood._batches(keys)] == [4]
    # 5 terms a key: two keys fill 10; the long key (500 terms) is a batch of its own.
    with _batch_terms(10):
        parts = list(likelihood._batches(keys))
    assert [len(p) for p in parts] == [2, 1, 1]
    assert [k for p in parts for k in p] == keys


def test_log_factorial_tables_grow_to_the_functions_values() -> None:
    tables = likelihood._LogFactorials()
    tables.upto(10)
    early = tables.scalar_array
    seen = early.copy()
    sizes = []
    for n in (3_000, 70_000, 4_500_000, 4_600_000):
        tables.upto(n)
        sizes.append(len(tables.scalar))
        assert len(tables.array) == len(tables.scalar) == len(tables.scalar_array) > n
    # Past 4M entries the tables grow by an eighth beyond the need, not by doubling.
    assert sizes[2] == 4_500_001 + 4_500_000 // 8 and sizes[3] == sizes[2]
    size = sizes[-1]
    picks = np.unique(np.r_[0:50, np.linspace(0, size - 1, 2_000).astype(np.int64)])
    assert all(tables.scalar[x] == math.lgamma(x + 1) for x in picks.tolist())
    assert (tables.scalar_array[picks] == np.array([tables.scalar[x] for x in picks])).all()
    assert (tables.array[picks] == gammaln(picks.astype(np.float64) + 1)).all()
    # A view taken before the tables grew still reads what it read.
    assert (early == seen).all()

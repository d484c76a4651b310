"""Random small serial corpora for property tests: deletions and insertions between releases."""

from __future__ import annotations

import random
from dataclasses import dataclass

from hypothesis import strategies as st

from app.core.model import Transaction

PUBLIC_TERMS = ("a", "b", "c", "d", "e", "f", "g", "h")


@dataclass(frozen=True)
class SmallSeries:
    corpora: list[list[Transaction]]
    private_terms: frozenset[str]
    r_th: float
    cluster_size: int
    seed: int


def _transaction(rng: random.Random, public: list[str], private: list[str]) -> Transaction:
    terms = set(rng.sample(public, rng.randint(0, min(3, len(public)))))
    if rng.random() < 0.45:
        terms.update(rng.sample(private, rng.randint(1, min(2, len(private)))))
    if not terms:
        terms.add(rng.choice(public))
    return Transaction(frozenset(terms))


def build_series(
    seed: int,
    releases: int,
    sizes: list[int],
    n_private: int,
    n_public: int,
    r_th: float,
    cluster_size: int,
) -> SmallSeries:
    """A series whose release i+1 keeps a random part of release i and adds new records."""
    rng = random.Random(seed)
    public = list(PUBLIC_TERMS[:n_public])
    private = [f"s{i}" for i in range(n_private)]
    current = [_transaction(rng, public, private) for _ in range(sizes[0])]
    corpora = [current]
    for size in sizes[1:releases]:
        kept = [t for t in current if rng.random() < 0.6]
        fresh = [_transaction(rng, public, private) for _ in range(max(size - len(kept), 0))]
        current = (kept + fresh) or [_transaction(rng, public, private)]
        corpora.append(current)
    return SmallSeries(corpora, frozenset(private), r_th, cluster_size, seed)


@st.composite
def small_series(draw: st.DrawFn) -> SmallSeries:
    """3 to 5 releases of 5 to 60 transactions, 1 to 4 private terms, r_th in [1.5, 8]."""
    releases = draw(st.integers(3, 5))
    return build_series(
        seed=draw(st.integers(0, 2**32)),
        releases=releases,
        sizes=draw(st.lists(st.integers(5, 60), min_size=releases, max_size=releases)),
        n_private=draw(st.integers(1, 4)),
        n_public=draw(st.integers(3, 8)),
        r_th=draw(st.floats(1.5, 8, allow_nan=False)),
        cluster_size=draw(st.integers(2, 6)),
    )

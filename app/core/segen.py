"""SeGen: serial corpora generated from one large corpus (design.md §10; section 4 of the paper)."""

from __future__ import annotations

import random
from collections.abc import Sequence

__all__ = ["choose_private_terms", "segen"]


def segen(
    corpus_size: int, size: int, releases: int, rep: float, seed: int | str
) -> list[list[int]]:
    """Positions into a corpus of ``corpus_size`` transactions for each release.

    Release 1 is a random sample of ``size`` transactions; release i+1 keeps ``rep`` of
    release i (a random subset) and adds fresh transactions, not in release i, to the same
    size. When ``size`` exceeds what the corpus can give fresh, positions repeat (a position
    then stands for several individuals with the same record).

    >>> [len(r) for r in segen(100, 10, 3, 0.4, 1)]
    [10, 10, 10]
    """
    if not 0 <= rep <= 1:
        raise ValueError("rep must be in [0, 1]")
    rng = random.Random(f"segen:{seed}")
    current = _sample(rng, corpus_size, size, set())
    series = [current]
    for _ in range(releases - 1):
        kept = rng.sample(current, round(rep * len(current)))
        fresh = _sample(rng, corpus_size, size - len(kept), set(current))
        current = kept + fresh
        series.append(current)
    return series


def _sample(rng: random.Random, corpus_size: int, count: int, exclude: set[int]) -> list[int]:
    pool = [i for i in range(corpus_size) if i not in exclude]
    if count <= len(pool):
        return rng.sample(pool, count)
    return pool + [rng.randrange(corpus_size) for _ in range(count - len(pool))]


def choose_private_terms(terms: Sequence[str], fraction: float, seed: int | str) -> frozenset[str]:
    """A seeded random ``fraction`` of the distinct terms (at least one) to be private."""
    distinct = sorted(set(terms))
    count = max(1, round(fraction * len(distinct)))
    return frozenset(random.Random(f"private:{seed}").sample(distinct, count))

"""Anony: one corpus on its own (SPEC 2; section 2.2, formulas 3 and 4).

Segregation splits each cluster into its rows (non-private sets) and the multiset of its
private terms; sanitisation moves copies of s to the global bag until every cluster meets
``γ_s(C) <= r_th``; refining moves copies back where a cluster can take them, in a seeded
order, so that the publication does not reveal which clusters gave copies away (minimality).

Terms are independent of each other, so each private term is sanitised and refined on its
own, over the clusters as numpy vectors.

``J_s(C) = round(N(C) * N(s, C_g) / N(T))`` rounds half to even (Python's and numpy's
``round``), as note 6 of the paper allows. The published global share ``N(s, C_ol)`` is
``J_s(C)`` capped at what keeps ``γ_s(C) <= r_th``: rounding must not break the guarantee.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from app.core.model import Row

__all__ = ["AnonyCluster", "AnonyResult", "anonymise", "global_shares"]

_EPS = 1e-9


@dataclass(slots=True)
class AnonyCluster:
    """``C^ϑ = {C^S̄, C_c, C_ol}`` before any counterfeit is added."""

    rows: list[Row]
    private_counts: Counter[str]
    global_share: dict[str, int]


@dataclass(slots=True)
class AnonyResult:
    """The anonymised corpus ``T^ϑ``: clusters, global bag and true population rates."""

    clusters: list[AnonyCluster]
    global_bag: Counter[str]
    rates: dict[str, float]
    n_rows: int


def global_shares(sizes: np.ndarray, in_bag: int, n_rows: int) -> np.ndarray:
    """``J_s(C)`` for every cluster (formula 3), rounded half to even.

    >>> global_shares(np.array([2, 2, 2]), 1, 6).tolist()
    [0, 0, 0]
    """
    return np.rint(sizes * in_bag / n_rows).astype(np.int64)


def _limit(sizes: np.ndarray, total: int, n_rows: int, r_th: float) -> np.ndarray:
    """``r_th * ss(s, T) * N(C)``: the copies at which ``γ_s(C) = r_th`` (formula 4)."""
    limit: np.ndarray = r_th * total * sizes / n_rows
    return limit


def _allowed(sizes: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """Largest ``N(s, C_c) + J_s(C)`` with ``γ_s(C) <= r_th``, at most ``N(C)``."""
    allowed: np.ndarray = np.minimum(np.floor(limit + _EPS).astype(np.int64), sizes)
    return allowed


def _sanitise(counts: np.ndarray, sizes: np.ndarray, allowed: np.ndarray, n_rows: int) -> int:
    """Move copies to the global bag until no cluster violates; returns ``N(s, C_g)``.

    Moving copies only grows the bag and so every ``J_s``: the loop reaches a fixed point.
    """
    in_bag = 0
    while True:
        share = global_shares(sizes, in_bag, n_rows)
        excess = np.maximum(counts - np.maximum(allowed - share, 0), 0)
        moved = int(excess.sum())
        if moved == 0:
            return in_bag
        counts -= excess
        in_bag += moved


def _refine(
    counts: np.ndarray,
    sizes: np.ndarray,
    limit: np.ndarray,
    in_bag: int,
    n_rows: int,
    order: Sequence[int],
) -> int:
    """Move copies back from the bag in the seeded ``order`` while clusters can take them."""
    if in_bag == 0:
        return 0
    allowed = _allowed(sizes, limit)
    if int(sizes.max()) * in_bag * 2 < n_rows:
        # J_s is 0 for every cluster whatever is moved: one vectorised pass is exact.
        room = np.maximum(allowed - counts, 0)[list(order)]
        taken = np.minimum(room, np.maximum(in_bag - (np.cumsum(room) - room), 0))
        counts[list(order)] += taken
        return in_bag - int(taken.sum())
    moved = True
    while moved and in_bag:
        moved = False
        for c in order:
            while in_bag:
                share_now = round(int(sizes[c]) * in_bag / n_rows)
                share_after = round(int(sizes[c]) * (in_bag - 1) / n_rows)
                excluded = counts[c] + share_now < limit[c] - _EPS  # γ_s(C) < r_th
                if not excluded or counts[c] + 1 + share_after > allowed[c]:
                    break
                counts[c] += 1
                in_bag -= 1
                moved = True
    return in_bag


def anonymise(
    rows: Sequence[Row],
    private_sets: Sequence[frozenset[str]],
    partition: Sequence[Sequence[int]],
    r_th: float,
    seed: int | str,
) -> AnonyResult:
    """Anony on a partitioned corpus (segregation, sanitisation, refining; section 2.2).

    Parameters
    ----------
    rows, private_sets:
        Non-private set and private set of each transaction.
    partition:
        Clusters as lists of transaction positions.
    r_th:
        Risk-lift threshold.
    seed:
        Seeds the refining order, which is one permutation of the clusters for every term.
    """
    n_rows = len(rows)
    sizes = np.array([len(members) for members in partition], dtype=np.int64)
    holders: dict[str, Counter[int]] = {}
    for c, members in enumerate(partition):
        for i in members:
            for s in private_sets[i]:
                holders.setdefault(s, Counter())[c] += 1
    order = list(range(len(partition)))
    random.Random(f"refine:{seed}").shuffle(order)
    private_counts: list[Counter[str]] = [Counter() for _ in partition]
    shares: list[dict[str, int]] = [{} for _ in partition]
    global_bag: Counter[str] = Counter()
    rates: dict[str, float] = {}
    for s in sorted(holders):
        counts = np.zeros(len(partition), dtype=np.int64)
        for c, k in holders[s].items():
            counts[c] = k
        total = int(counts.sum())
        rates[s] = total / n_rows
        limit = _limit(sizes, total, n_rows, r_th)
        in_bag = _sanitise(counts, sizes, _allowed(sizes, limit), n_rows)
        in_bag = _refine(counts, sizes, limit, in_bag, n_rows, order)
        for position in np.flatnonzero(counts).tolist():
            private_counts[position][s] = int(counts[position])
        if in_bag:
            global_bag[s] = in_bag
            # Rounding J_s up can alone exceed r_th (three clusters of one row sharing a bag
            # of two copies: J = round(2/3) = 1 each); the published share is capped so that
            # every published cluster stays s-preserving (decision, formula 4).
            share = np.minimum(
                global_shares(sizes, in_bag, n_rows),
                np.maximum(_allowed(sizes, limit) - counts, 0),
            )
            for position in np.flatnonzero(share).tolist():
                shares[position][s] = int(share[position])
    clusters = [
        AnonyCluster([rows[i] for i in members], private_counts[c], shares[c])
        for c, members in enumerate(partition)
    ]
    return AnonyResult(clusters, global_bag, rates, n_rows)

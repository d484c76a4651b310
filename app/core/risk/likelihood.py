"""The adversary's likelihoods of an overlap, formulas 13 and 14, as a log ratio.

Both formulas share the denominator ``C(N(C*)-1, N(O)-z)``, so the posterior (12) only needs
``log(P(O | s in T) / P(O | s not in T))``: the denominators cancel and no huge binomial is
ever formed. Sums over the range are done in log space (``logsumexp``), so nothing overflows
and ``0/0`` never happens: an impossible overlap gives ``nan`` (both likelihoods are zero),
certain evidence gives ``+inf`` or ``-inf``.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.special import gammaln

__all__ = ["log_comb", "log_likelihood_ratio"]

_SMALL_RANGE = 48


class _LogFactorials:
    """``log(x!)`` for x = 0, 1, ..., grown on demand, in the two forms the sums use.

    ``scalar[x]`` is ``math.lgamma(x + 1)`` and ``array[x]`` is ``gammaln(x + 1)``: a lookup
    gives exactly the value the function would, so the sums below are the same numbers as when
    each ``lgamma`` was evaluated, only without evaluating it again for every overlap.
    """

    def __init__(self) -> None:
        self.scalar: list[float] = []
        self.array: np.ndarray = np.zeros(0)

    def upto(self, n: int) -> None:
        if n < len(self.scalar):
            return
        size = max(n + 1, 2 * len(self.scalar), 1024)
        self.scalar.extend(math.lgamma(x + 1) for x in range(len(self.scalar), size))
        self.array = gammaln(np.arange(size, dtype=np.float64) + 1)


_FACTORIALS = _LogFactorials()


def log_comb(n: int, k: int) -> float:
    """``log C(n, k)``, with ``-inf`` where the binomial is zero (k < 0, k > n or n < 0).

    >>> round(math.exp(log_comb(5, 2)))
    10
    >>> log_comb(-1, 0)
    -inf
    """
    if n < 0 or k < 0 or k > n:
        return -math.inf
    _FACTORIALS.upto(n)
    table = _FACTORIALS.scalar
    return table[n] - table[k] - table[n - k]


def _log_comb_array(n: int, k: np.ndarray) -> np.ndarray:
    valid = (k >= 0) & (k <= n) & (n >= 0)
    kk = np.where(valid, k, 0)
    _FACTORIALS.upto(max(n, 0))
    table = _FACTORIALS.array
    out = table[max(n, 0)] - table[kk] - table[np.where(valid, n - kk, 0)]
    return np.where(valid, out, -np.inf)


def _log_sums(n_s: int, n: int, o: int, r1: int, r2: int, z: int) -> tuple[float, float]:
    n_sbar = n - n_s
    if r2 - r1 <= _SMALL_RANGE:
        with_s = [log_comb(n_s - 1, r - z) + log_comb(n_sbar, o - r) for r in range(r1, r2 + 1)]
        without = [log_comb(n_s, r) + log_comb(n_sbar - 1, o - r - z) for r in range(r1, r2 + 1)]
        return _lse(with_s), _lse(without)
    r = np.arange(r1, r2 + 1)
    a = _log_comb_array(n_s - 1, r - z) + _log_comb_array(n_sbar, o - r)
    b = _log_comb_array(n_s, r) + _log_comb_array(n_sbar - 1, o - r - z)
    return _logsumexp(a), _logsumexp(b)


def _lse(values: list[float]) -> float:
    finite = [v for v in values if v != -math.inf]
    if not finite:
        return -math.inf
    top = max(finite)
    return top + math.log(sum(math.exp(v - top) for v in finite))


def _logsumexp(a: np.ndarray) -> float:
    """``log(sum(exp(a)))`` of a 1-d array of finite values and ``-inf``, computed as
    ``scipy.special.logsumexp`` does (the largest terms kept out of the sum, ``log1p``), with
    the same operations and so the same result, without its per-call overhead."""
    top = np.max(a, keepdims=True)
    if top[0] == -np.inf:
        return -math.inf
    at_top = a == top
    m = np.sum(at_top.astype(np.float64), keepdims=True, dtype=np.float64)
    rest = np.where(at_top, -np.inf, a)
    total = np.sum(np.exp(rest - top), keepdims=True, dtype=np.float64)
    total = np.where(total == 0, total, total / m)
    return float((np.log1p(total) + np.log(m) + top)[0])


@lru_cache(maxsize=1 << 18)
def log_likelihood_ratio(n_s: int, n: int, o: int, r1: int, r2: int, z: int) -> float:
    """``log P(O | s in T) - log P(O | s not in T)`` for one overlap (formulas 13, 14).

    Parameters
    ----------
    n_s, n:
        ``N(s, C*)`` and ``N(C*)`` of the row's cluster.
    o:
        ``N(O)``, rows in the overlap.
    r1, r2:
        The range of O for s (formula 6), ``r1 <= r2``.
    z:
        1 when the row's non-private set is in O, else 0.

    Returns ``+inf`` when only ``s in T`` explains the overlap, ``-inf`` when only ``s not in T``
    does, and ``nan`` when neither can (the overlap is then uninformative for this z).

    >>> log_likelihood_ratio(1, 2, 1, 0, 0, 0)  # Example 9: Laura must hold HIV
    inf
    >>> log_likelihood_ratio(1, 2, 1, 0, 1, 0)  # Example 9, cancer: no evidence
    0.0
    """
    with_s, without = _log_sums(n_s, n, o, r1, r2, z)
    if with_s == -math.inf and without == -math.inf:
        return math.nan
    if without == -math.inf:
        return math.inf
    if with_s == -math.inf:
        return -math.inf
    return with_s - without

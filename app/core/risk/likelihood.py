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
from scipy.special import gammaln, logsumexp

__all__ = ["log_comb", "log_likelihood_ratio"]

_SMALL_RANGE = 48


def log_comb(n: int, k: int) -> float:
    """``log C(n, k)``, with ``-inf`` where the binomial is zero (k < 0, k > n or n < 0).

    >>> round(math.exp(log_comb(5, 2)))
    10
    >>> log_comb(-1, 0)
    -inf
    """
    if n < 0 or k < 0 or k > n:
        return -math.inf
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def _log_comb_array(n: int, k: np.ndarray) -> np.ndarray:
    valid = (k >= 0) & (k <= n) & (n >= 0)
    kk = np.where(valid, k, 0)
    out = gammaln(n + 1) - gammaln(kk + 1) - gammaln(n - kk + 1)
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
    return float(logsumexp(a)), float(logsumexp(b))


def _lse(values: list[float]) -> float:
    finite = [v for v in values if v != -math.inf]
    if not finite:
        return -math.inf
    top = max(finite)
    return top + math.log(sum(math.exp(v - top) for v in finite))


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

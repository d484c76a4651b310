"""The adversary's likelihoods of an overlap, formulas 13 and 14, as a log ratio.

Both formulas share the denominator ``C(N(C*)-1, N(O)-z)``, so the posterior (12) only needs
``log(P(O | s in T) / P(O | s not in T))``: the denominators cancel and no huge binomial is
ever formed. Sums over the range are done in log space (``logsumexp``), so nothing overflows
and ``0/0`` never happens: an impossible overlap gives ``nan`` (both likelihoods are zero),
certain evidence gives ``+inf`` or ``-inf``.
"""

from __future__ import annotations

import array
import itertools
import math
from collections.abc import Iterator, Sequence

import numpy as np
from scipy.special import gammaln

__all__ = ["RatioKey", "log_comb", "log_likelihood_ratio", "log_likelihood_ratios"]

_SMALL_RANGE = 48


class _LogFactorials:
    """``log(x!)`` for x = 0, 1, ..., grown on demand, in the two forms the sums use.

    ``scalar[x]`` is ``math.lgamma(x + 1)`` (also as the array ``scalar_array``, a view of the
    same memory) and ``array[x]`` is ``gammaln(x + 1)``: a lookup gives exactly the value the
    function would, so the sums below are the same numbers as when each ``lgamma`` was
    evaluated, only without evaluating it again for every overlap.
    """

    def __init__(self) -> None:
        # C doubles, not a list of float objects: the table reaches the size of the largest
        # release (the global composition's N(T*)), and at 10M rows a list held 32 bytes an
        # entry where these hold 8; a lookup still gives the same Python float.
        self.scalar: array.array[float] = array.array("d")
        self.scalar_array: np.ndarray = np.zeros(0)
        self.array: np.ndarray = np.zeros(0)

    def upto(self, n: int) -> None:
        old = len(self.scalar)
        if n < old:
            return
        # Doubling while small; past 4M entries (32 MB a table) an eighth beyond the need: at
        # 10,000,000 rows doubling reached 16.8M entries, three tables of 134 MB.
        size = max(n + 1 + n // 8, min(2 * old, old + (1 << 22)), 1024)
        # New objects, never resized in place: ``scalar_array`` views ``scalar``'s memory, and
        # a view in use elsewhere keeps the table it was made from. The entries already
        # computed are copied, not computed again (each is a function of x alone).
        scalar = array.array("d", self.scalar)
        scalar.extend(math.lgamma(x + 1) for x in range(old, size))
        self.array = np.concatenate(
            (self.array, gammaln(np.arange(old, size, dtype=np.float64) + 1))
        )
        self.scalar_array = np.frombuffer(scalar, dtype=np.float64)
        # Last: ``len(self.scalar)`` is what says the tables reach ``size``.
        self.scalar = scalar


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


def _lc(table: array.array[float], n: int, k: int) -> float:
    """:func:`log_comb` with the table at hand (``n`` within it): the same value."""
    if n < 0 or k < 0 or k > n:
        return -math.inf
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
        _FACTORIALS.upto(max(n, 0))
        table = _FACTORIALS.scalar
        with_s = [_lc(table, n_s - 1, r - z) + _lc(table, n_sbar, o - r) for r in range(r1, r2 + 1)]
        without = [
            _lc(table, n_s, r) + _lc(table, n_sbar - 1, o - r - z) for r in range(r1, r2 + 1)
        ]
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


#: Overlap parameters ``(N(s, C*), N(C*), N(O), r1, r2, z)`` of one likelihood ratio.
RatioKey = tuple[int, int, int, int, int, int]

_CACHE_SIZE = 1 << 18
_cache: dict[RatioKey, float] = {}


def _remember(key: RatioKey, value: float) -> float:
    if len(_cache) >= _CACHE_SIZE:
        # Drop the older half (dicts keep insertion order): recent overlaps recur.
        for old in list(itertools.islice(_cache, _CACHE_SIZE // 2)):
            del _cache[old]
    _cache[key] = value
    return value


def _ratio(with_s: float, without: float) -> float:
    if with_s == -math.inf and without == -math.inf:
        return math.nan
    if without == -math.inf:
        return math.inf
    if with_s == -math.inf:
        return -math.inf
    return with_s - without


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
    does, and ``nan`` when neither can (the overlap is then uninformative for this z). Values
    are cached on their six integers.

    >>> log_likelihood_ratio(1, 2, 1, 0, 0, 0)  # Example 9: Laura must hold HIV
    inf
    >>> log_likelihood_ratio(1, 2, 1, 0, 1, 0)  # Example 9, cancer: no evidence
    0.0
    """
    key = (n_s, n, o, r1, r2, z)
    found = _cache.get(key)
    if found is not None:
        return found
    if _whole_range(key):
        return _remember(key, 0.0)
    return _remember(key, _ratio(*_log_sums(n_s, n, o, r1, r2, z)))


def _whole_range(key: RatioKey) -> bool:
    """Whether ``[r1, r2]`` holds the cluster's whole s-range w.r.t. O (formula 5): then both
    sums of formulas 13 and 14 run over every term that is not zero and are, by Vandermonde's
    identity, the same ``C(N(C*)-1, N(O)-z)`` (when ``0 < N(s) < N`` and
    ``0 <= N(O)-z <= N-1``), so the ratio is exactly 1 (log 0) and nothing is
    summed. At a million rows the whole-release overlaps give ranges of thousands of terms,
    half of them whole (the other release holds at least as many copies).

    >>> _whole_range((3, 10, 4, 0, 3, 1)), _whole_range((3, 10, 4, 1, 3, 1))
    (True, False)
    """
    n_s, n, o, r1, r2, z = key
    # Vandermonde needs both kinds of rows (C(-1, k) is 0 here) and a denominator that is not
    # 0; otherwise the sums are computed (certain evidence, or nan).
    return 0 < n_s < n and 0 <= o - z <= n - 1 and r1 <= max(n_s - (n - o), 0) and r2 >= min(o, n_s)


def log_likelihood_ratios(keys: Sequence[RatioKey]) -> list[float]:
    """:func:`log_likelihood_ratio` of many overlaps, the same values, computed together.

    numpy's per-call overhead dominates one ratio, so the terms of every sum are formed in one
    pass over all of them, from the same tables; the sums are then taken as one call would:
    short ranges term by term in Python (:func:`_lse`), long ones with the same element-wise
    operations and per-segment reductions as :func:`_logsumexp`. The values are identical.
    """
    values: list[float | None] = [_cache.get(key) for key in keys]
    short: dict[RatioKey, None] = {}
    long: dict[RatioKey, None] = {}
    for i, (key, value) in enumerate(zip(keys, values, strict=True)):
        if value is None:
            if _whole_range(key):
                values[i] = _remember(key, 0.0)
            else:
                (short if key[4] - key[3] <= _SMALL_RANGE else long)[key] = None
    for sums_of, pending in ((_log_sums_short, short), (_log_sums_long, long)):
        for batch in _batches(list(pending)):
            for key, sums in zip(batch, sums_of(batch), strict=True):
                _remember(key, _ratio(*sums))
    return [v if v is not None else _cache[key] for v, key in zip(values, keys, strict=True)]


#: The most terms of formulas 13 and 14 formed at once (:func:`_batches`).
_BATCH_TERMS = 1 << 20


def _batches(keys: list[RatioKey]) -> Iterator[list[RatioKey]]:
    """``keys`` in consecutive batches of at most :data:`_BATCH_TERMS` terms (a key whose own
    range is longer is a batch alone).

    Every term of a batch is formed at once, in about a dozen arrays of 8 bytes a term: at
    10,000,000 rows the whole-release overlaps of one repair round reached tens of millions
    of terms, over a gigabyte for a moment. Each key's sums read its own
    segment only, so batching leaves every value as it was."""
    batch: list[RatioKey] = []
    terms = 0
    for key in keys:
        length = key[4] - key[3] + 1
        if batch and terms + length > _BATCH_TERMS:
            yield batch
            batch, terms = [], 0
        batch.append(key)
        terms += length
    if batch:
        yield batch


def _log_comb_arrays(n: np.ndarray, k: np.ndarray, table: np.ndarray) -> np.ndarray:
    """``log C(n, k)`` element-wise from a log-factorial table, ``-inf`` where it is zero."""
    valid = (k >= 0) & (k <= n) & (n >= 0)
    kk = np.where(valid, k, 0)
    out = table[np.maximum(n, 0)] - table[kk] - table[np.where(valid, n - kk, 0)]
    return np.where(valid, out, -np.inf)


def _terms(keys: list[RatioKey], scalar: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The terms of both sums of formulas 13 and 14 for every key, concatenated: ``(a, b,
    starts)`` with ``a[i]`` = ``log C(n_s-1, r-z) + log C(n_s̄, o-r)``, ``b[i]`` =
    ``log C(n_s, r) + log C(n_s̄-1, o-r-z)`` and key ``k``'s terms from ``starts[k]`` on."""
    params = np.array(keys, dtype=np.int64)
    n_s, n, o, r1, r2, z = params.T
    lengths = r2 - r1 + 1
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    segment = np.repeat(np.arange(len(keys)), lengths)
    r = np.arange(int(lengths.sum()), dtype=np.int64) - starts[segment] + r1[segment]
    n_sbar = (n - n_s)[segment]
    n_s, o, z = n_s[segment], o[segment], z[segment]
    _FACTORIALS.upto(int(n.max(initial=0)))
    table = _FACTORIALS.scalar_array if scalar else _FACTORIALS.array
    a = _log_comb_arrays(n_s - 1, r - z, table) + _log_comb_arrays(n_sbar, o - r, table)
    b = _log_comb_arrays(n_s, r, table) + _log_comb_arrays(n_sbar - 1, o - r - z, table)
    return a, b, starts


def _log_sums_short(keys: list[RatioKey]) -> list[tuple[float, float]]:
    """:func:`_log_sums` (short ranges) of many keys."""
    a, b, starts = _terms(keys, scalar=True)
    bounds = [*starts.tolist(), len(a)]
    with_s, without = a.tolist(), b.tolist()
    return [
        (_lse(with_s[bounds[i] : bounds[i + 1]]), _lse(without[bounds[i] : bounds[i + 1]]))
        for i in range(len(keys))
    ]


def _log_sums_long(keys: list[RatioKey]) -> list[tuple[float, float]]:
    """:func:`_log_sums` (long ranges) of many keys: segments of one concatenated array."""
    a, b, starts = _terms(keys, scalar=False)
    segment = np.repeat(np.arange(len(keys)), np.diff(np.append(starts, len(a))))
    with_s = _logsumexp_segments(a, starts, segment)
    return list(zip(with_s, _logsumexp_segments(b, starts, segment), strict=True))


def _logsumexp_segments(a: np.ndarray, starts: np.ndarray, segment: np.ndarray) -> list[float]:
    """:func:`_logsumexp` of every segment of ``a``."""
    top = np.maximum.reduceat(a, starts)
    at_top = a == top[segment]
    m = np.add.reduceat(at_top.astype(np.float64), starts)
    rest = np.where(at_top, -np.inf, a)
    with np.errstate(invalid="ignore"):
        total = np.add.reduceat(np.exp(rest - top[segment]), starts)
    total = np.where(total == 0, total, total / m)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log1p(total) + np.log(m) + top
    values: list[float] = np.where(top == -np.inf, -np.inf, out).tolist()
    return values

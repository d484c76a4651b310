"""The scoring stage: how related two terms are in the world (thesis 4.1.2, 4.2.1).

Relatedness is learnt from a background corpus, never from the release attacked:

- :class:`CooccurrenceRelatedness`: the normalised Google distance of formula 4.1 computed
  offline, page counts replaced by the background corpus' transaction counts;
- :class:`EmbeddingRelatedness`: cosine similarity of skip-gram word embeddings (Word2Vec,
  thesis 4.1.2 "WE") trained in-process with gensim, seeded and on one worker;
- :class:`TableRelatedness`: given scores (the thesis's Table 4.4, tests, other tools).

All answer ``matrix(rows, cols)``, a dense block of scores in ``[0, 1]`` (0 = unrelated or
unknown term), so that the selection stage scores a whole cluster with one call.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt
from scipy import sparse

__all__ = [
    "CooccurrenceRelatedness",
    "EmbeddingRelatedness",
    "Relatedness",
    "TableRelatedness",
    "ngd",
]

Matrix = npt.NDArray[np.float64]
Vector = npt.NDArray[np.float64]


class Relatedness(Protocol):
    """A relatedness score for every pair of terms, in ``[0, 1]``."""

    def matrix(self, rows: Sequence[str], cols: Sequence[str]) -> Matrix:
        """Scores of each term of ``rows`` (axis 0) with each term of ``cols`` (axis 1)."""
        ...

    def pairs(self, left: Sequence[str], right: Sequence[str]) -> Vector:
        """Scores of ``left[i]`` with ``right[i]``, for every ``i``."""
        ...


class TableRelatedness:
    """Scores given pair by pair (symmetric); a pair not given scores 0.

    >>> TableRelatedness({("lung", "tumor"): 0.48}).matrix(["tumor"], ["lung", "x"])
    array([[0.48, 0.  ]])
    """

    def __init__(self, scores: Mapping[tuple[str, str], float]) -> None:
        self._scores = {frozenset(pair): float(s) for pair, s in scores.items()}

    def matrix(self, rows: Sequence[str], cols: Sequence[str]) -> Matrix:
        return np.array(
            [[self._scores.get(frozenset((r, c)), 0.0) for c in cols] for r in rows],
            dtype=np.float64,
        ).reshape(len(rows), len(cols))

    def pairs(self, left: Sequence[str], right: Sequence[str]) -> Vector:
        return np.array(
            [self._scores.get(frozenset(p), 0.0) for p in zip(left, right, strict=True)],
            dtype=np.float64,
        )


def ngd(f_x: float, f_y: float, f_xy: float, n: float) -> float:
    """Formula 4.1: ``(max(log f(x), log f(y)) - log f(x,y)) / (log N - min(log f(x), log f(y)))``.

    Infinite when the terms never occur together (or one never occurs); 0 when they always
    do. A term in every transaction makes the denominator 0: it says nothing, so the distance
    is then 0 if the pair always co-occurs, else infinite (decision).

    >>> round(ngd(10, 10, 5, 1000), 4)
    0.1505
    >>> ngd(10, 10, 0, 1000)
    inf
    """
    if f_x <= 0 or f_y <= 0 or f_xy <= 0:
        return float("inf")
    lx, ly = np.log(f_x), np.log(f_y)
    numerator = max(lx, ly) - np.log(f_xy)
    denominator = np.log(n) - min(lx, ly)
    if denominator <= 0:
        return 0.0 if numerator <= 0 else float("inf")
    return float(numerator / denominator)


class CooccurrenceRelatedness:
    """Offline NGD (formula 4.1) from a background corpus of transactions.

    ``f(x)`` is the number of background transactions holding ``x``, ``f(x, y)`` those holding
    both, ``N`` their number. The thesis rescales NGD to ``1 - NGD / max NGD`` over its
    benchmark pairs; pairs are scored here on demand, with no global maximum, so the score is
    ``1 / (1 + NGD)``: the same order, 1 for terms always together, 0 for never together.

    >>> r = CooccurrenceRelatedness([["a", "b"], ["a", "b"], ["a", "c"], ["d"]])
    >>> r.matrix(["a"], ["b", "c", "d"]).round(3)
    array([[0.631, 0.558, 0.   ]])
    """

    def __init__(self, background: Iterable[Iterable[str]]) -> None:
        index: dict[str, int] = {}
        cols: list[int] = []
        ptr = [0]
        for transaction in background:
            terms = {index.setdefault(t, len(index)) for t in transaction}
            cols.extend(sorted(terms))
            ptr.append(len(cols))
        data = np.ones(len(cols), dtype=np.float64)
        shape = (len(ptr) - 1, len(index))
        x = sparse.csr_matrix((data, cols, ptr), shape=shape)
        # f(x, y) for every pair of background terms, once: a sparse Gram matrix.
        self._both = (x.T @ x).tocsr()
        self._index = index
        self._f = np.asarray(x.sum(axis=0)).ravel()
        self._n = float(max(shape[0], 1))

    def matrix(self, rows: Sequence[str], cols: Sequence[str]) -> Matrix:
        ri, rk = self._lookup(rows)
        ci, ck = self._lookup(cols)
        out = np.zeros((len(rows), len(cols)))
        if ri and ci:
            both = self._both[ri][:, ci].toarray()
            fx = np.repeat(self._f[ri][:, None], len(ci), axis=1)
            fy = np.repeat(self._f[ci][None, :], len(ri), axis=0)
            out[np.ix_(rk, ck)] = self._score(fx, fy, both)
        return out

    def pairs(self, left: Sequence[str], right: Sequence[str]) -> Vector:
        li = np.array([self._index.get(t, -1) for t in left], dtype=np.int64)
        ri = np.array([self._index.get(t, -1) for t in right], dtype=np.int64)
        out = np.zeros(len(left))
        known = (li >= 0) & (ri >= 0)
        if known.any():
            a, b = li[known], ri[known]
            both = np.asarray(self._both[a, b]).ravel()
            out[known] = self._score(self._f[a], self._f[b], both)
        return out

    def _score(self, fx: Matrix, fy: Matrix, both: Matrix) -> Matrix:
        """``1 / (1 + NGD)`` elementwise (formula 4.1), 0 where the terms never meet."""
        with np.errstate(divide="ignore", invalid="ignore"):
            numerator = np.maximum(np.log(fx), np.log(fy)) - np.log(both)
            denominator = np.log(self._n) - np.minimum(np.log(fx), np.log(fy))
            distance = np.where(denominator > 0, numerator / denominator, 0.0)
        distance = np.where(both > 0, np.maximum(distance, 0.0), np.inf)
        return np.asarray(1.0 / (1.0 + distance), dtype=np.float64)

    def _lookup(self, terms: Sequence[str]) -> tuple[list[int], list[int]]:
        """Background columns of the known terms, and their positions in ``terms``."""
        found = [(self._index[t], p) for p, t in enumerate(terms) if t in self._index]
        return [c for c, _ in found], [p for _, p in found]


def _stable_hash(text: str) -> int:
    # gensim seeds each word's initial vector with hashfxn(word + seed); Python's hash() is
    # salted per process, so the default would change the embeddings from run to run.
    return zlib.crc32(text.encode("utf-8"))


class EmbeddingRelatedness:
    """Cosine similarity of skip-gram Word2Vec embeddings (thesis 4.1.2), clipped at 0.

    Trained in-process on ``sentences`` with gensim: ``sg=1`` (skip-gram, better than CBOW
    for small corpora and rare words, as the thesis notes), a fixed ``seed``, one worker
    thread and a process-independent hash, so the same input gives the same vectors.
    ``window`` should cover a whole transaction when the sentences are sets of terms
    (their order means nothing); ``sample`` is gensim's down-sampling of frequent words, to
    be set to 0 for a small vocabulary where every term is frequent. A term the background
    never saw scores 0 (the thesis's out-of-vocabulary limitation, 4.1.3).
    """

    def __init__(
        self,
        sentences: Sequence[Sequence[str]],
        *,
        seed: int = 0,
        vector_size: int = 100,
        window: int = 5,
        epochs: int = 10,
        min_count: int = 1,
        sample: float = 1e-3,
    ) -> None:
        from gensim.models import Word2Vec  # heavy import, only when embeddings are used

        model = Word2Vec(
            sentences=[list(s) for s in sentences if s],
            vector_size=vector_size,
            window=window,
            min_count=min_count,
            sg=1,
            seed=seed,
            workers=1,
            epochs=epochs,
            sample=sample,
            hashfxn=_stable_hash,
        )
        self._index: dict[str, int] = dict(model.wv.key_to_index)
        self._vectors: Matrix = np.asarray(model.wv.get_normed_vectors(), dtype=np.float64)

    def matrix(self, rows: Sequence[str], cols: Sequence[str]) -> Matrix:
        out = np.zeros((len(rows), len(cols)))
        rk = [p for p, t in enumerate(rows) if t in self._index]
        ck = [p for p, t in enumerate(cols) if t in self._index]
        if rk and ck:
            a = self._vectors[[self._index[rows[p]] for p in rk]]
            b = self._vectors[[self._index[cols[p]] for p in ck]]
            out[np.ix_(rk, ck)] = np.clip(a @ b.T, 0.0, 1.0)
        return out

    def pairs(self, left: Sequence[str], right: Sequence[str]) -> Vector:
        li = np.array([self._index.get(t, -1) for t in left], dtype=np.int64)
        ri = np.array([self._index.get(t, -1) for t in right], dtype=np.int64)
        out = np.zeros(len(left))
        known = (li >= 0) & (ri >= 0)
        if known.any():
            dots = np.einsum("ij,ij->i", self._vectors[li[known]], self._vectors[ri[known]])
            out[known] = np.clip(dots, 0.0, 1.0)
        return out

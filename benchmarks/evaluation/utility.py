"""Utility of a release: relative error of term-pair supports (formula 21, section 4.4).

Pairs are drawn in three support bands (low 1-10, medium 20-40, high 70-200), ``per_band``
each, per release, with a seeded generator that does not depend on the method, so every method
is judged on the same pairs. Decision: a pair's band is read on the *source corpus* D (the
whole BMS file SeGen samples from), among the pairs that occur in the release's original
snapshot ``T_i``; ``s_o`` is the pair's support in ``T_i``. The paper's wording ("supports in
the dataset", "for each original corpus T_i") allows D or ``T_i``, but a 5% snapshot holds no
pair of support 70-200 (its most frequent pair has about 65 on either corpus), so bands read
on ``T_i`` leave the high band empty at the default size; and pairs of D absent from ``T_i``
(most of the low band) would only add ``re(0, 0)`` terms. ``source=None`` reads the bands on
``T_i`` instead (``--bands-on snapshot``).

Published support (Definition 4, random reconstruction): each published row of a cluster C*
gets the private term s with probability ``N(s, C*) / N(C*)`` (cluster segment plus global
share), independently per row and per term. Hence for a pair

- of two non-private terms: the support is counted on the published rows, counterfeits
  included (an analyst cannot tell them apart); no randomness;
- of a non-private term a and a private term s: the sum over clusters of
  ``Binomial(k_C, p_s(C))`` with ``k_C`` the rows of C holding a;
- of two private terms s, t: the sum of ``Binomial(N(C), p_s(C)·p_t(C))``.

Inv publishes one concatenated value per row (``"HIV|herpes"``, NULL ``""``) instead of terms:
there a row draws one value with probability ``N(v, C*)/N(C*)`` and holds s when its value
contains s (:func:`inv_value_terms`).

Drawing the binomials is the same distribution as assigning terms row by row, and much cheaper.
``re = |s_o - s_p| / avg(s_o, s_p)`` is computed for each of ``reconstructions`` draws and
averaged (the paper: "generated 20 times and the results averaged"); ``s_o >= 1`` by the bands,
``s_o >= 1``, so the denominator is never 0.
"""

from __future__ import annotations

import itertools
import random
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from app.core.model import PublishedRelease

__all__ = [
    "BANDS",
    "Pair",
    "band_candidates",
    "inv_value_terms",
    "draw_pairs",
    "pair_supports",
    "published_supports",
    "relative_error",
    "release_utility",
]

BANDS: dict[str, tuple[int, int]] = {"low": (1, 10), "medium": (20, 40), "high": (70, 200)}
Pair = tuple[str, str]


def pair_supports(transactions: Iterable[Iterable[str]]) -> Counter[Pair]:
    """Support of every term pair: the transactions holding both terms.

    >>> pair_supports([{"a", "b"}, {"a", "b", "c"}])[("a", "b")]
    2
    """
    counts: Counter[Pair] = Counter()
    for terms in transactions:
        counts.update(itertools.combinations(sorted(terms), 2))
    return counts


def band_candidates(
    snapshot: Counter[Pair], source: Counter[Pair] | None = None
) -> dict[str, list[Pair]]:
    """The pairs of ``snapshot`` in each band of ``source`` (of ``snapshot`` when None),
    sorted so that a seeded draw is reproducible."""
    support = source if source is not None else snapshot
    return {
        band: sorted(p for p in snapshot if low <= support[p] <= high)
        for band, (low, high) in BANDS.items()
    }


def draw_pairs(
    candidates: dict[str, list[Pair]], per_band: int, seed: str
) -> dict[str, list[Pair]]:
    """``per_band`` pairs of each band (all of them when the band holds fewer), seeded."""
    rng = random.Random(f"pairs:{seed}")
    return {band: rng.sample(p, min(per_band, len(p))) for band, p in candidates.items()}


def inv_value_terms(value: str) -> frozenset[str]:
    """The private terms of one of Inv's concatenated sensitive values (``""`` is NULL).

    >>> sorted(inv_value_terms("HIV|herpes")), inv_value_terms("")
    (['HIV', 'herpes'], frozenset())
    """
    terms, current, escaped = [], [], False
    for char in value:
        if escaped:
            current.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "|":
            terms.append("".join(current))
            current = []
        else:
            current.append(char)
    if value:
        terms.append("".join(current))
    return frozenset(terms)


def _probabilities(
    release: PublishedRelease, terms: list[str], values: Callable[[str], frozenset[str]] | None
) -> np.ndarray:
    """Per cluster, the chance that a reconstructed row holds every term of ``terms``.

    Terms are assigned independently (Definition 4) unless ``values`` decodes the published
    keys into sets of terms (Inv): then each row holds exactly one value, drawn with
    probability ``N(v, C*)/N(C*)``, and holds the terms when its value contains them all.
    """
    prob = np.ones(len(release.clusters))
    for c, cluster in enumerate(release.clusters):
        size = max(cluster.size, 1)
        if values is None:
            for term in terms:
                prob[c] *= min(cluster.n_s(term) / size, 1.0)
        else:
            keys = {*cluster.private_counts, *cluster.global_share}
            held = sum(cluster.n_s(k) for k in keys if set(terms) <= values(k))
            prob[c] = min(held / size, 1.0)
    return prob


def published_supports(
    release: PublishedRelease,
    pairs: Sequence[Pair],
    private: frozenset[str],
    reconstructions: int,
    seed: str,
    values: Callable[[str], frozenset[str]] | None = None,
) -> np.ndarray:
    """Support of each pair in ``reconstructions`` random reconstructions: shape (pairs, R).

    ``values`` decodes published private keys that are not single terms (Inv's concatenated
    values, :func:`inv_value_terms`).
    """
    rng = np.random.default_rng(zlib.crc32(f"reconstruct:{seed}".encode()))
    clusters = release.clusters
    # Rows are sets, so a term's count in a cluster is the number of its rows holding it.
    term_rows = [Counter(t for row in cluster.rows for t in row) for cluster in clusters]
    sizes = np.array([cluster.size for cluster in clusters], dtype=np.int64)
    result = np.empty((len(pairs), reconstructions))
    for i, pair in enumerate(pairs):
        public = [t for t in pair if t not in private]
        if len(public) == 2:
            a, b = public
            result[i, :] = sum(1 for c in clusters for row in c.rows if a in row and b in row)
            continue
        held = sizes if not public else np.array([rows[public[0]] for rows in term_rows])
        prob = _probabilities(release, [t for t in pair if t in private], values)
        draws = rng.binomial(held, prob, size=(reconstructions, len(clusters)))
        result[i, :] = draws.sum(axis=1)
    return result


def relative_error(original: np.ndarray | float, published: np.ndarray) -> np.ndarray:
    """Formula 21: ``|s_o - s_p| / avg(s_o, s_p)``, in [0, 2].

    >>> relative_error(10.0, np.array([10.0, 30.0, 0.0])).tolist()
    [0.0, 1.0, 2.0]
    """
    total = original + published
    return np.where(total > 0, 2 * np.abs(original - published) / np.maximum(total, 1e-300), 0.0)


def release_utility(
    original: Sequence[frozenset[str]],
    release: PublishedRelease,
    private: frozenset[str],
    *,
    source: Counter[Pair] | None,
    per_band: int,
    reconstructions: int,
    seed: str,
    values: Callable[[str], frozenset[str]] | None = None,
) -> dict[str, dict[str, float | int | None]]:
    """Per band: pairs drawn, mean re, and the mean re over the pairs with a private term.

    ``source`` are the pair supports of the source corpus, where bands are read (``None``:
    on ``original``); ``values`` decodes Inv's concatenated values.
    """
    snapshot = pair_supports(original)
    drawn = draw_pairs(band_candidates(snapshot, source), per_band, seed)
    result: dict[str, dict[str, float | int | None]] = {}
    for band, pairs in drawn.items():
        if not pairs:
            result[band] = {"pairs": 0, "re": None, "private_pairs": 0, "re_private": None}
            continue
        published = published_supports(
            release, pairs, private, reconstructions, f"{seed}:{band}", values
        )
        s_o = np.array([snapshot[p] for p in pairs], dtype=float)
        errors = relative_error(s_o[:, None], published).mean(axis=1)
        with_private = [i for i, p in enumerate(pairs) if p[0] in private or p[1] in private]
        result[band] = {
            "pairs": len(pairs),
            "re": float(errors.mean()),
            "private_pairs": len(with_private),
            "re_private": float(errors[with_private].mean()) if with_private else None,
        }
    return result

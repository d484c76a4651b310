"""The selection stage: which anchoring sub-record a term or sub-record joins (thesis 4.3).

An *anchor* is a candidate record the attacker completes: a sub-record ``ASR`` of the
anchoring chunk ``C_1`` of a disassociated cluster, or a published row of an Anony-style
cluster. For a sub-record ``SR`` (or a term ``t``) to place, the scoring stage gives every
pair (term of the anchor, term of ``SR``) a score; each anchor term's scores are averaged
over the terms of ``SR`` (the inner sum of formula 4.3), then the anchor's terms combine:

- ``aba`` (Algorithm 6, formula 4.3): the mean over the anchor's terms;
- ``rga`` (Algorithm 7, formula 4.5): the mean over the *related group*, the anchor's terms
  scoring at least the median of the anchor's scores;
- ``mra`` (Algorithm 8): the best of the anchor's terms.

Anchors are then ranked, best first; ties keep the anchors' order (the thesis "chooses the
first ASR with the best semantic score"). An empty anchor scores 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

__all__ = [
    "Selection",
    "SELECTIONS",
    "anchor_scores",
    "anchor_scores_all",
    "best_anchors",
    "incidence",
]

Selection = Literal["aba", "mra", "rga"]
SELECTIONS: tuple[Selection, ...] = ("aba", "mra", "rga")

Vector = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]


def incidence(anchors: Sequence[Sequence[str]], terms: Sequence[str]) -> Mask:
    """Boolean matrix: anchor ``i`` holds ``terms[j]``.

    >>> incidence([("a", "b"), ()], ["a", "b", "c"]).astype(int).tolist()
    [[1, 1, 0], [0, 0, 0]]
    """
    position = {t: j for j, t in enumerate(terms)}
    mask = np.zeros((len(anchors), len(terms)), dtype=np.bool_)
    for i, anchor in enumerate(anchors):
        mask[i, [position[t] for t in anchor]] = True
    return mask


def anchor_scores(
    mask: Mask, term_scores: Vector, selection: Selection, held: npt.NDArray[np.int64] | None = None
) -> Vector:
    """Score of every anchor for one ``SR`` or ``t`` (formulas 4.3, 4.5; Algorithm 8).

    Parameters
    ----------
    mask:
        :func:`incidence` of the anchors over the terms that ``term_scores`` scores.
    term_scores:
        For each term, its score with the ``SR`` (averaged over the terms of ``SR``).
    selection:
        ``aba``, ``rga`` or ``mra``.
    held:
        ``mask.sum(axis=1)`` when the caller keeps it (a reconstruction calls this once per
        term with anchors that change little: counting them again each time was a third of
        its time).

    Examples
    --------
    Table 4.4, *radiotherapy* against (blood, treatment, lung): ABA 0.297 (Table 4.5),
    RGA 0.405 (Table 4.7: *blood*, under the median 0.33, is left out), MRA 0.48 (Table 4.9).

    >>> m = incidence([("blood", "treatment", "lung")], ["blood", "treatment", "lung"])
    >>> v = np.array([0.08, 0.48, 0.33])
    >>> [round(float(anchor_scores(m, v, s)[0]), 3) for s in ("aba", "rga", "mra")]
    [0.297, 0.405, 0.48]
    """
    scores = np.zeros(mask.shape[0])
    if held is None:
        held = mask.sum(axis=1)
    full = held > 0
    if not full.any():
        return scores
    sub = mask[full]
    if selection == "aba":
        scores[full] = (sub @ term_scores) / held[full]
        return scores
    # The best term and the related group only look at terms some anchor holds: the others
    # (most of a cluster's terms, those of the chunks placed) are dropped before the search.
    used = sub.any(axis=0)
    sub, term_scores = sub[:, used], term_scores[used]
    if selection == "mra":
        scores[full] = np.where(sub, term_scores, -np.inf).max(axis=1)
    else:
        values = np.where(sub, term_scores, np.nan)
        median = np.nanmedian(values, axis=1)
        related = np.where(values >= median[:, None], values, np.nan)
        scores[full] = np.nanmean(related, axis=1)
    return scores


def anchor_scores_all(
    mask: Mask, scores: npt.NDArray[np.float64], selection: Selection
) -> npt.NDArray[np.float64]:
    """:func:`anchor_scores` for many single terms at once: column ``j`` of the result is
    ``anchor_scores(mask, scores[:, j], selection)``. For a fixed set of anchors (no update
    between terms), one call instead of one per term of a term chunk.

    >>> m = incidence([("blood", "treatment", "lung"), ()], ["blood", "treatment", "lung"])
    >>> v = np.array([[0.08, 1.0], [0.48, 0.0], [0.33, 0.5]])
    >>> [[round(float(x), 3) for x in row] for row in anchor_scores_all(m, v, "rga")]
    [[0.405, 0.75], [0.0, 0.0]]
    """
    out = np.zeros((mask.shape[0], scores.shape[1]))
    held = mask.sum(axis=1)
    full = held > 0
    if not full.any() or not scores.shape[1]:
        return out
    used = mask[full].any(axis=0)  # only the terms some anchor holds matter
    sub, values = mask[full][:, used], scores[used]
    if selection == "aba":
        out[full] = (sub.astype(np.float64) @ values) / held[full][:, None]
        return out
    # anchors x held terms x single terms, the terms an anchor lacks masked out
    spread = np.where(sub[:, :, None], values[None, :, :], np.nan)
    if selection == "mra":
        out[full] = np.nanmax(spread, axis=1)
    else:
        median = np.nanmedian(spread, axis=1)
        related = np.where(spread >= median[:, None, :], spread, np.nan)
        out[full] = np.nanmean(related, axis=1)
    return out


def best_anchors(
    scores: Vector, count: int, allowed: Mask | None = None, tiebreak: Vector | None = None
) -> list[int]:
    """The ``count`` best anchors (Algorithm 6 lines 4-14); ties to the first, or to the
    smallest ``tiebreak``; only anchors ``allowed`` when given (fewer when fewer are allowed).

    >>> best_anchors(np.array([0.2, 0.5, 0.5, 0.1]), 2)
    [1, 2]
    >>> best_anchors(np.array([0.5, 0.5, 0.5]), 2, tiebreak=np.array([0.9, 0.1, 0.5]))
    [1, 2]
    """
    if tiebreak is None:
        order = np.argsort(-scores, kind="stable")
    else:
        order = np.lexsort((tiebreak, -scores))
    if allowed is not None:
        order = order[allowed[order]]
    return [int(i) for i in order[:count]]

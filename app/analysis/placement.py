"""Supports under random placement: the mean and spread of what reconstructions hold.

The model is :func:`app.analysis.reconstruct.reconstruct`'s (Sanony paper, Definition 4,
completed with the global bag): in a cluster ``C*`` of ``N(C*)`` rows of which ``m`` hold the
public itemset X, the ``N(s, C*)`` copies of s sit on distinct random rows, so the rows
holding X and s follow a hypergeometric law (mean ``N(s, C*) m / N(C*)``); clusters are
independent. The bag's copies that no cluster's share places (``L``,
:meth:`app.analysis.reader.Release.unplaced_copies`; formula 3 rounds the share of a bag
spread thin to 0, so ``L`` can be most of the copies) then go to ``L`` distinct random rows
of the ``F`` rows without s, which adds, given ``Y`` rows with X and s in the clusters,
a hypergeometric ``Z`` of ``L`` draws among ``F`` rows, ``M - Y`` of them with X. By total
variance, with ``a = L / F`` and ``mu = (M - E[Y]) / F``:

    E[Y + Z]   = E[Y] (1 - a) + a M
    Var[Y + Z] = (1 - a)^2 Var[Y] + L (F - L) / (F - 1) (mu (1 - mu) - Var[Y] / F^2)

This is a model: it says what a reconstruction holds, not where the raw data's copies are
(an association of X and s in the raw data is exactly what it does not see). The bounds of
:mod:`app.analysis.bounds` say what the raw data can be.
"""

from __future__ import annotations

import numpy as np

__all__ = ["placement_moments"]


def placement_moments(
    sizes: np.ndarray, with_x: np.ndarray, placed: np.ndarray, unplaced: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Mean and sd of the rows holding X and s under random placement, for every (X, s).

    ``sizes``: ``N(C*)`` per cluster (``C``); ``with_x``: rows holding X per cluster and
    itemset (``C x T``); ``placed``: ``N(s, C*)`` per cluster and private term (``C x S``);
    ``unplaced``: the bag's copies no share places, per private term (``S``). Returns two
    ``T x S`` matrices.

    Examples
    --------
    One cluster of 4 rows, 2 holding X, 1 copy of s placed and 1 more from the bag:

    >>> mean, sd = placement_moments(
    ...     np.array([4]), np.array([[2]]), np.array([[1]]), np.array([1]))
    >>> float(mean[0, 0]), round(float(sd[0, 0]) ** 2, 4)
    (1.0, 0.3333)
    """
    n = np.asarray(sizes, dtype=float)[:, None]
    m = np.asarray(with_x, dtype=float)
    k = np.minimum(np.asarray(placed, dtype=float), n)
    p = m / np.maximum(n, 1.0)
    w = np.where(n > 1, k * (n - k) / np.maximum(n - 1, 1.0), 0.0)
    mean_y = p.T @ k
    var_y = np.maximum((p * (1 - p)).T @ w, 0.0)
    free = (n - k).sum(axis=0)  # rows without s, per private term
    left = np.minimum(np.asarray(unplaced, dtype=float), free)
    share = np.divide(left, free, out=np.zeros_like(free), where=free > 0)
    total_x = m.sum(axis=0)[:, None]
    safe_free = np.maximum(free, 1.0)
    mu = np.clip((total_x - mean_y) / safe_free, 0.0, 1.0)
    mean = mean_y * (1 - share) + share * total_x
    spread = left * (free - left) / np.maximum(free - 1, 1.0)
    variance = (1 - share) ** 2 * var_y + spread * (mu * (1 - mu) - var_y / safe_free**2)
    return mean, np.sqrt(np.maximum(variance, 0.0))

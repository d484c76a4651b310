"""The semantic attack on Anony-style releases (SPEC 11): every method but disassociation.

A published cluster ``C*`` shows its rows (non-private sets, counterfeits among them) and
``N(s, C*)`` copies of each private term, not which rows hold them. The risk model of SPEC 4
assumes the adversary places those copies at random (prior ``N(s, C*)/N(C*)`` per row).
Knowing which terms go together in the world, the attacker instead:

- **reassociates private copies**: each row is an anchor, ``s`` the term to place (thesis
  4.3 with the row's non-private terms in place of ``ASR``); the ``N(s, C*)`` best-ranked
  rows receive ``s`` (``N(s, C_c)`` plus the global share ``N(s, C_ol)``, capped at the
  cluster size);
- **scores each row's coherence**: the mean relatedness over the pairs of its own terms.
  A counterfeit is a random sample of its cluster's terms (Definition 14): its terms need
  not belong together, so low coherence points at counterfeits. A row of one term has no
  pair: its coherence is undefined (``nan``).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from app.core.attacks.scoring import Relatedness
from app.core.attacks.selection import Selection, anchor_scores, best_anchors, incidence
from app.core.model import PublishedCluster, PublishedRelease

__all__ = ["PrivateGuess", "reassociate_private", "row_coherence"]


@dataclass(frozen=True, slots=True)
class PrivateGuess:
    """The rows (positions in ``PublishedCluster.rows``) given each private term, per cluster."""

    method: str
    clusters: tuple[dict[str, tuple[int, ...]], ...]


def reassociate_private(
    release: PublishedRelease,
    relatedness: Relatedness | None,
    method: Selection | str,
    *,
    seed: int = 0,
) -> PrivateGuess:
    """Put every private copy of every cluster on a row (``aba``, ``mra``, ``rga``, or
    ``random``: the risk model's random reconstruction).

    Examples
    --------
    >>> from app.core.attacks.scoring import TableRelatedness
    >>> from app.core.model import release_from_counts
    >>> r = release_from_counts(1, [([("cough", "flu"), ("arson", "theft")], {"fever": 1}, {}, 0)],
    ...                         {}, {"fever": 0.5})
    >>> rel = TableRelatedness({("fever", "flu"): 0.9, ("fever", "cough"): 0.7})
    >>> reassociate_private(r, rel, "aba").clusters
    ({'fever': (0,)},)
    """
    rng = random.Random(f"private:{method}:{seed}")
    clusters = []
    for cluster in release.clusters:
        targets = sorted(cluster.private_terms())
        if method == "random" or relatedness is None:
            scores = {s: np.array([rng.random() for _ in cluster.rows]) for s in targets}
        else:
            scores = _scores(cluster, targets, relatedness, method)  # type: ignore[arg-type]
        clusters.append(
            {
                s: tuple(sorted(best_anchors(scores[s], min(cluster.n_s(s), cluster.size))))
                for s in targets
            }
        )
    return PrivateGuess(str(method), tuple(clusters))


def _scores(
    cluster: PublishedCluster, targets: Sequence[str], relatedness: Relatedness, method: Selection
) -> dict[str, npt.NDArray[np.float64]]:
    terms = sorted({t for row in cluster.rows for t in row})
    mask = incidence(cluster.rows, terms)
    block = relatedness.matrix(terms, targets)
    return {s: anchor_scores(mask, block[:, j], method) for j, s in enumerate(targets)}


def row_coherence(release: PublishedRelease, relatedness: Relatedness) -> list[list[float]]:
    """Per cluster, per row: mean relatedness over the pairs of the row's terms (``nan`` for
    a row of fewer than two terms).

    >>> from app.core.attacks.scoring import TableRelatedness
    >>> from app.core.model import release_from_counts
    >>> r = release_from_counts(1, [([("cough", "flu", "x"), ("arson",)], {}, {}, 0)], {}, {})
    >>> row_coherence(r, TableRelatedness({("flu", "cough"): 0.9}))
    [[0.3, nan]]
    """
    out = []
    for cluster in release.clusters:
        terms = sorted({t for row in cluster.rows for t in row})
        position = {t: j for j, t in enumerate(terms)}
        block = relatedness.matrix(terms, terms)
        values = []
        for row in cluster.rows:
            if len(row) < 2:
                values.append(float("nan"))
                continue
            idx = [position[t] for t in row]
            pairs = block[np.ix_(idx, idx)][np.triu_indices(len(idx), 1)]
            values.append(round(float(pairs.mean()), 12))
        out.append(values)
    return out

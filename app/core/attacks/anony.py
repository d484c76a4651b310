"""The semantic attack on Anony-style releases (design.md §11): every method but disassociation.

A published cluster ``C*`` shows its rows (non-private sets, counterfeits among them) and
``N(s, C*)`` copies of each private term, not which rows hold them. The risk model of design.md §4
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

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

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
    ``random``: the risk model's random reconstruction). Ties go to a seeded random row.

    Scores come from one relatedness block over all the release's row terms and private
    terms, so the cost is one scoring call plus a few array operations per cluster.

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
    rng = np.random.default_rng(seed)
    semantic = method in ("aba", "mra", "rga") and relatedness is not None
    block = _Block(release, relatedness) if semantic and relatedness is not None else None
    clusters = []
    for cluster in release.clusters:
        targets = sorted(cluster.private_terms())
        # One draw per target: blind placements of two terms must not follow each other.
        tiebreak = rng.random((cluster.size, len(targets)))
        if block is None or not targets:
            scores = np.zeros((cluster.size, len(targets)))
        else:
            scores = block.scores(cluster, targets, method)  # type: ignore[arg-type]
        chosen = {}
        for j, s in enumerate(targets):
            count = min(cluster.n_s(s), cluster.size)
            chosen[s] = tuple(sorted(best_anchors(scores[:, j], count, None, tiebreak[:, j])))
        clusters.append(chosen)
    return PrivateGuess(str(method), tuple(clusters))


class _Block:
    """Relatedness of every row term of a release with every private term, computed once."""

    def __init__(self, release: PublishedRelease, relatedness: Relatedness) -> None:
        terms = sorted({t for c in release.clusters for row in c.rows for t in row})
        private = sorted({s for c in release.clusters for s in c.private_terms()})
        self._terms = {t: i for i, t in enumerate(terms)}
        self._private = {s: j for j, s in enumerate(private)}
        self._block = relatedness.matrix(terms, private)

    def scores(
        self, cluster: PublishedCluster, targets: Sequence[str], method: Selection
    ) -> npt.NDArray[np.float64]:
        """Rows x targets: each row (anchor) scored for each private term (formulas 4.3,
        4.5, Algorithm 8)."""
        terms = sorted({t for row in cluster.rows for t in row})
        if not terms:  # only empty non-private sets: nothing to tell the rows apart
            return np.zeros((cluster.size, len(targets)))
        mask = incidence(cluster.rows, terms)
        sub = self._block[
            np.ix_([self._terms[t] for t in terms], [self._private[s] for s in targets])
        ]
        if method == "aba":
            held = np.maximum(mask.sum(axis=1), 1)[:, None]
            return np.asarray((mask @ sub) / held, dtype=np.float64)
        if method == "mra":
            masked = np.where(mask[:, :, None], sub[None, :, :], -np.inf).max(axis=1)
            return np.asarray(np.where(np.isfinite(masked), masked, 0.0), dtype=np.float64)
        return np.stack([anchor_scores(mask, sub[:, j], method) for j in range(len(targets))], 1)


def row_coherence(release: PublishedRelease, relatedness: Relatedness) -> list[list[float]]:
    """Per cluster, per row: mean relatedness over the pairs of the row's terms (``nan`` for
    a row of fewer than two terms). All pairs of the release are scored in one call.

    >>> from app.core.attacks.scoring import TableRelatedness
    >>> from app.core.model import release_from_counts
    >>> r = release_from_counts(1, [([("cough", "flu", "x"), ("arson",)], {}, {}, 0)], {}, {})
    >>> row_coherence(r, TableRelatedness({("flu", "cough"): 0.9}))
    [[0.3, nan]]
    """
    left: list[str] = []
    right: list[str] = []
    owner: list[int] = []
    rows = [row for cluster in release.clusters for row in cluster.rows]
    for g, row in enumerate(rows):
        for a, b in combinations(row, 2):
            left.append(a)
            right.append(b)
            owner.append(g)
    sums = np.bincount(owner, weights=relatedness.pairs(left, right), minlength=len(rows))
    counts = np.bincount(owner, minlength=len(rows))
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(counts > 0, np.round(sums / np.maximum(counts, 1), 12), np.nan)
    out, start = [], 0
    for cluster in release.clusters:
        out.append([float(v) for v in values[start : start + cluster.size]])
        start += cluster.size
    return out

"""The semantic attack on disassociated releases (thesis 4.2-4.3, Algorithms 4-6, 9).

Each cluster is rebuilt around its anchoring chunk ``C_1``: one *slot* per record, the
slot's anchor being its ``C_1`` sub-record (the records beyond ``C_1``'s sub-records have an
empty one; the cluster's size is public). Every sub-record of the other record chunks, every
term of the term chunk and every sub-record of a shared chunk then joins the slots the
selection method ranks best (Algorithm 5). Scores are taken against the anchoring chunk as
published (Algorithm 4 scores everything before any selection; Table 4.5 does so).

Placement (Algorithm 6 lines 5-14): a sub-record published ``c`` times joins the ``c`` best
slots; a term of the term chunk joins the ``k - 1`` best (its support is below ``k`` and the
release does not say how far below). Decision beyond the thesis: one record holds at most one
sub-record of a chunk (Definition 2), so a slot that already took a sub-record of a chunk is
not offered another of the same chunk.

Methods: ``aba``, ``rga``, ``mra`` (:mod:`~app.core.attacks.selection`); ``vpa``
(:mod:`~app.core.attacks.vpa`, Algorithm 9, record chunks only; the rest at random as the
thesis does); ``random``: the baseline, the same placements with random scores.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from app.core.attacks.scoring import Relatedness
from app.core.attacks.selection import (
    Selection,
    anchor_scores,
    anchor_scores_all,
    best_anchors,
    incidence,
)
from app.core.attacks.vpa import vpa_record_chunks
from app.core.disassociation.model import DisassociatedRelease, PublicCluster
from app.core.errors import InvalidParameter
from app.core.model import Row

__all__ = ["Method", "METHODS", "ReconstructedCluster", "Reconstruction", "reconstruct"]

Method = Literal["aba", "mra", "rga", "vpa", "random"]
Ties = Literal["first", "random"]
METHODS: tuple[Method, ...] = ("aba", "mra", "rga", "vpa", "random")


@dataclass(frozen=True, slots=True)
class ReconstructedCluster:
    """Per slot: the anchor (``C_1`` sub-record, maybe empty) and the terms the attack added."""

    anchors: tuple[Row, ...]
    added: tuple[frozenset[str], ...]

    def records(self) -> list[frozenset[str]]:
        """The reconstructed records ``T̄`` (anchor plus added terms)."""
        return [frozenset(a) | x for a, x in zip(self.anchors, self.added, strict=True)]


@dataclass(frozen=True, slots=True)
class Reconstruction:
    """The reconstructed dataset ``D̄``, cluster by cluster (Algorithm 5's output)."""

    method: str
    clusters: tuple[ReconstructedCluster, ...]


def anchors_of(cluster: PublicCluster) -> list[Row]:
    """The slots' anchors: ``C_1``'s sub-records, then empty ones up to the cluster size."""
    first = list(cluster.record_chunks[0]) if cluster.record_chunks else []
    return first + [()] * (cluster.size - len(first))


class _Placer:
    """Ranks the slots of a group of anchors for a sub-record or a term, and places it."""

    def __init__(
        self,
        anchors: Sequence[Row],
        targets: Sequence[str],
        relatedness: Relatedness | None,
        method: Method,
        draws: _Draws,
        options: tuple[Ties, bool],
    ) -> None:
        self._method = method
        self._draws = draws
        self._n = len(anchors)
        self._ties, self._update = options
        if method in ("aba", "mra", "rga") and relatedness is not None:
            terms = sorted({t for a in anchors for t in a} | set(targets))
            self._rows = {t: i for i, t in enumerate(terms)}
            self._mask = incidence(anchors, terms)
            self._held = self._mask.sum(axis=1)
            self._columns = {t: j for j, t in enumerate(sorted(set(targets)))}
            self._scores = relatedness.matrix(terms, sorted(self._columns))

    def _rank(self, sub_record: Row, count: int, allowed: np.ndarray | None) -> list[int]:
        tiebreak = None
        if self._ties == "random" or self._method not in ("aba", "mra", "rga"):
            tiebreak = self._draws.take(self._n)
        if self._method not in ("aba", "mra", "rga"):
            return best_anchors(np.zeros(self._n), count, allowed, tiebreak)
        columns = [self._columns[t] for t in sub_record]
        term_scores = self._scores[:, columns].mean(axis=1)
        selection: Selection = self._method
        scores = anchor_scores(self._mask, term_scores, selection, self._held)
        return best_anchors(scores, count, allowed, tiebreak)

    def _put(self, slot: int, sub_record: Row, added: list[set[str]]) -> None:
        added[slot].update(sub_record)
        if self._update and self._method in ("aba", "mra", "rga"):
            # Algorithm 5, line 6: the anchor grows with what was placed on it. Term by term
            # (a sub-record has a few distinct terms): fancy indexing per placement cost
            # more than the placement.
            mask, held = self._mask, self._held
            for term in sub_record:
                row = self._rows[term]
                if not mask[slot, row]:
                    mask[slot, row] = True
                    held[slot] += 1

    def place_chunk(self, chunk: Sequence[Row], added: list[set[str]]) -> None:
        """Each distinct sub-record joins as many best slots as it has copies; a slot takes at
        most one sub-record of the chunk."""
        allowed = np.ones(self._n, dtype=np.bool_)
        for sub_record, copies in sorted(Counter(chunk).items()):
            for slot in self._rank(sub_record, copies, allowed):
                self._put(slot, sub_record, added)
                allowed[slot] = False

    def place_terms(self, terms: Sequence[str], copies: int, added: list[set[str]]) -> None:
        ordered = sorted(terms)
        semantic = self._method in ("aba", "mra", "rga")
        if not ordered:
            return
        if self._update and semantic:
            for term in ordered:
                for slot in self._rank((term,), copies, None):
                    self._put(slot, (term,), added)
            return
        # Anchors that do not grow score every term the same way whatever was placed before:
        # one block for the whole term chunk (most of the attack's time otherwise, one call
        # per term), ranked in one sort. Ties are drawn as :meth:`_rank` draws them, term by
        # term (one row of the block of draws per term, in the same order), so the slots are
        # those the term-by-term ranking picks. The random baseline scores every slot 0.
        if self._method in ("aba", "mra", "rga"):
            selection: Selection = self._method
            columns = [self._columns[t] for t in ordered]
            block = anchor_scores_all(self._mask, self._scores[:, columns], selection).T
        else:
            block = np.zeros((len(ordered), self._n))
        if self._ties == "random" or not semantic:
            ties = self._draws.take(self._n * len(ordered)).reshape(len(ordered), self._n)
            order = np.lexsort((ties, -block), axis=-1)
        else:
            order = np.argsort(-block, axis=-1, kind="stable")
        for term, slots in zip(ordered, order[:, :copies].tolist(), strict=True):
            # Nothing to update on the anchors here: a plain add (one call per placement was
            # a tenth of the attack).
            for slot in slots:
                added[slot].add(term)


class _Draws:
    """The tie-break numbers: the stream of ``rng.random()``, drawn many at a time.

    Python's :class:`random.Random` and NumPy's ``MT19937`` are the same Mersenne Twister
    and make a float from two 32-bit words the same way, so a NumPy generator started from
    ``rng``'s state yields the very numbers ``[rng.random() for _ in range(n)]`` would, at
    array speed (drawing them one by one in Python was a sixth of the attack). ``rng`` is
    then left behind: with ``bulk`` off (VPA, which draws from ``rng`` itself between the
    placements) every number comes from ``rng``.
    """

    def __init__(self, rng: random.Random, bulk: bool) -> None:
        self._rng = rng
        self._bulk: np.random.Generator | None = None
        if bulk:
            _, state, _ = rng.getstate()
            bits = np.random.MT19937()
            bits.state = {
                "bit_generator": "MT19937",
                "state": {"key": np.array(state[:-1], dtype=np.uint32), "pos": state[-1]},
            }
            self._bulk = np.random.Generator(bits)

    def take(self, n: int) -> npt.NDArray[np.float64]:
        """The next ``n`` numbers of the stream."""
        if self._bulk is None:
            return np.array([self._rng.random() for _ in range(n)], dtype=np.float64)
        return self._bulk.random(n)


def reconstruct(
    release: DisassociatedRelease,
    relatedness: Relatedness | None,
    method: Method,
    *,
    seed: int = 0,
    term_copies: int | None = None,
    vpa_budget: int = 200,
    ties: Ties = "random",
    update: bool = False,
) -> Reconstruction:
    """Reassociate the chunks of ``release`` (Algorithm 5 with the given selection method).

    Parameters
    ----------
    release:
        The public disassociated release.
    relatedness:
        The scoring stage (:mod:`~app.core.attacks.scoring`); unused by ``vpa``/``random``.
    method:
        ``aba``, ``mra``, ``rga``, ``vpa`` or ``random``.
    seed:
        For ``random``, and for what ``vpa`` places at random.
    term_copies:
        Slots each term-chunk term joins; ``None``: ``k - 1`` (Algorithm 6 line 12).
    vpa_budget:
        Combinations ``vpa`` tries per record chunk before placing it at random.
    ties:
        Among equal scores, ``first`` slot (the thesis) or a seeded ``random`` one (default:
        where many anchors are empty or alike, ``first`` piles every term on the same few
        records and does worse than the random baseline).
    update:
        Score later pieces against the anchors grown by what was placed (Algorithm 5, line 6
        read literally); ``False`` scores against ``C_1`` as published (Table 4.5).

    Returns
    -------
    Reconstruction
        Per cluster, per slot, the anchor and the terms added.
    """
    if method not in METHODS:
        raise InvalidParameter(f"method: one of {', '.join(METHODS)}", {"param": "method"})
    if method in ("aba", "mra", "rga") and relatedness is None:
        raise InvalidParameter(f"method {method} needs a relatedness", {"param": "method"})
    rng = random.Random(f"reconstruct:{method}:{seed}")
    draws = _Draws(rng, bulk=method != "vpa")
    semantic = method if method in ("aba", "mra", "rga") else "random"
    copies = release.k - 1 if term_copies is None else term_copies
    added_all: list[list[set[str]]] = []
    for cluster in release.clusters:
        anchors = anchors_of(cluster)
        added: list[set[str]] = [set() for _ in anchors]
        chunks = cluster.record_chunks[1:]
        targets = [t for chunk in chunks for s in chunk for t in s] + list(cluster.term_chunk)
        placer = _Placer(anchors, targets, relatedness, semantic, draws, (ties, update))
        if method == "vpa":
            for slot, terms in enumerate(
                vpa_record_chunks(
                    anchors, cluster.record_chunks, release.k, release.m, vpa_budget, rng
                )
            ):
                added[slot].update(terms)
        else:
            for chunk in chunks:
                placer.place_chunk(chunk, added)
        placer.place_terms(list(cluster.term_chunk), min(copies, len(anchors)), added)
        added_all.append(added)
    _place_shared(release, relatedness, semantic, draws, added_all, (ties, update))
    return Reconstruction(
        method,
        tuple(
            ReconstructedCluster(tuple(anchors_of(c)), tuple(frozenset(a) for a in added))
            for c, added in zip(release.clusters, added_all, strict=True)
        ),
    )


def _place_shared(
    release: DisassociatedRelease,
    relatedness: Relatedness | None,
    method: Method,
    draws: _Draws,
    added_all: list[list[set[str]]],
    options: tuple[Ties, bool],
) -> None:
    """Shared chunks: the same placement over the slots of the joint cluster's clusters."""
    for joint in release.joint_clusters:
        slots = [(c, i) for c in joint.clusters for i in range(release.clusters[c].size)]
        anchors = [a for c in joint.clusters for a in anchors_of(release.clusters[c])]
        targets = [t for chunk in joint.shared_chunks for s in chunk for t in s]
        placer = _Placer(anchors, targets, relatedness, method, draws, options)
        joint_added: list[set[str]] = [set() for _ in slots]
        for chunk in joint.shared_chunks:
            placer.place_chunk(chunk, joint_added)
        for (c, i), terms in zip(slots, joint_added, strict=True):
            added_all[c][i].update(terms)

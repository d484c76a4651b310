"""Measures of an attack on a disassociated release (thesis 5.2): reconstruction accuracy
(formula 5.4, averaged as ``Ac(D)``), transactions breakage (5.2, 5.3) and k^m-anonymity
breakage, scored against the publisher's private result.

Ground truth: slots with the same anchor (identical ``C_1`` sub-records) cannot be told apart
by anyone, so the reconstructed records of such slots are matched to the true records with
that anchor in the way that agrees best (an assignment problem, solved by
:func:`scipy.optimize.linear_sum_assignment`). The thesis counts a term placed on any of
identical anchors as found in the original dataset (5.3.1); this makes it precise. The same
matching is applied to every method, the random baseline included.

Only the disassociated part of a record counts (``T⁻ = T - C_1``, as the thesis excludes the
anchoring chunk); records with nothing disassociated are left out of the averages.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import numpy.typing as npt

from app.core.attacks.reconstruct import ReconstructedCluster, Reconstruction
from app.core.disassociation.model import DisassociatedCluster, Disassociation
from app.core.model import Transaction, make_row

__all__ = ["BreakageReport", "GroundTruth", "measure_reconstruction"]


@dataclass(frozen=True, slots=True)
class _Truth:
    """One kept record: its anchor, its disassociated terms by kind (and all of them: read
    for every slot it could be matched to, so computed once), its split itemsets."""

    anchor: frozenset[str]
    record_chunk_terms: frozenset[str]
    term_chunk_terms: frozenset[str]
    shared_terms: frozenset[str]
    protected: tuple[frozenset[str], ...]
    disassociated: frozenset[str]


@dataclass(frozen=True, slots=True)
class BreakageReport:
    """Chapter 5 measures of one reconstruction, each in ``[0, 1]``.

    ``accuracy`` is ``Ac(D)`` (formula 5.4 averaged over the records with a disassociated
    part); ``accuracy_record_chunks``/``accuracy_term_chunk`` the same over the terms of each
    kind (records having some); ``transactions_breakage`` formula 5.3, the share of records
    with at least one disassociated term put back (``Br(T) != 0``, 5.2); ``km_breakage``
    the share of protected itemsets (2 to ``m`` terms of one record, split over chunks, of
    support below ``k`` in the cluster) rebuilt on their record; ``precision`` the share of
    the terms the attack added that are right (not a thesis measure: over-placing raises
    accuracy, this shows what it costs).
    """

    accuracy: float
    accuracy_record_chunks: float
    accuracy_term_chunk: float
    transactions_breakage: float
    km_breakage: float
    precision: float
    records: int
    protected_itemsets: int


class GroundTruth:
    """The true records of ``result``, per cluster, ready to score any number of
    reconstructions of ``result.public()`` (an audit scores several: building this is about
    half the cost of one measure)."""

    def __init__(self, corpus: Sequence[Transaction], result: Disassociation) -> None:
        shared = _shared_terms(result)
        self._clusters = [
            _truths(corpus, cluster, shared, result.params.k, result.params.m)
            for cluster in result.clusters
        ]

    def measure(self, reconstruction: Reconstruction) -> BreakageReport:
        """Score ``reconstruction`` (thesis 5.2)."""
        pairs: list[tuple[_Truth, frozenset[str]]] = []
        for truths, rebuilt in zip(self._clusters, reconstruction.clusters, strict=True):
            pairs.extend(_match(truths, rebuilt))
        return _report(pairs)


def measure_reconstruction(
    corpus: Sequence[Transaction], result: Disassociation, reconstruction: Reconstruction
) -> BreakageReport:
    """Score ``reconstruction`` of ``result.public()`` against ``corpus`` (thesis 5.2)."""
    return GroundTruth(corpus, result).measure(reconstruction)


def _shared_terms(result: Disassociation) -> dict[int, set[str]]:
    """Corpus position -> its terms in shared chunks."""
    out: dict[int, set[str]] = defaultdict(set)
    for joint in result.joint_clusters:
        members = [i for c in joint.clusters for i in result.clusters[c].members]
        for chunk in joint.shared_chunks:
            for i, sub in zip(members, chunk.subrecords, strict=True):
                out[i].update(sub)
    return out


def _truths(
    corpus: Sequence[Transaction],
    cluster: DisassociatedCluster,
    shared: dict[int, set[str]],
    k: int,
    m: int,
) -> list[_Truth]:
    records = [corpus[i].terms for i in cluster.members]
    support: Counter[frozenset[str]] = Counter(
        frozenset(c)
        for r in records
        for size in range(2, m + 1)
        for c in combinations(sorted(r), size)
    )
    truths = []
    for row, (i, record) in enumerate(zip(cluster.members, records, strict=True)):
        subs = [c.subrecords[row] for c in cluster.record_chunks]
        anchor = subs[0] if subs else frozenset()
        # Which piece of the record each term was published in; a term-chunk term is a
        # piece of its own. An itemset is split when its terms lie in several pieces.
        piece = {t: p for p, sub in enumerate(subs) for t in sub}
        piece.update(dict.fromkeys(shared.get(i, ()), -1))
        piece.update({t: -2 - n for n, t in enumerate(sorted(record & cluster.term_chunk))})
        protected = tuple(
            frozenset(c)
            for size in range(2, m + 1)
            for c in combinations(sorted(record), size)
            if support[frozenset(c)] < k and len({piece[t] for t in c}) > 1
        )
        record_chunk_terms = frozenset().union(*subs[1:])
        term_chunk_terms = record & cluster.term_chunk
        shared_terms = frozenset(shared.get(i, ()))
        truths.append(
            _Truth(
                anchor=anchor,
                record_chunk_terms=record_chunk_terms,
                term_chunk_terms=term_chunk_terms,
                shared_terms=shared_terms,
                protected=protected,
                disassociated=record_chunk_terms | term_chunk_terms | shared_terms,
            )
        )
    return truths


def _match(
    truths: list[_Truth], rebuilt: ReconstructedCluster
) -> list[tuple[_Truth, frozenset[str]]]:
    """Pair each true record with a slot of the same anchor, agreeing best."""
    # Imported here, not with the module: every process that reads a series' settings
    # imports this package, and only an audit of a disassociated release matches records.
    from scipy.optimize import linear_sum_assignment

    slots: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for s, anchor in enumerate(rebuilt.anchors):
        slots[anchor].append(s)
    by_anchor: dict[tuple[str, ...], list[_Truth]] = defaultdict(list)
    for truth in truths:
        by_anchor[make_row(truth.anchor)].append(truth)
    pairs: list[tuple[_Truth, frozenset[str]]] = []
    for anchor, group in by_anchor.items():
        candidates = slots[anchor]
        gain = _gain([t.disassociated for t in group], [rebuilt.added[s] for s in candidates])
        rows, cols = linear_sum_assignment(gain, maximize=True)
        pairs.extend(
            (group[r], rebuilt.added[candidates[c]]) for r, c in zip(rows, cols, strict=True)
        )
    return pairs


def _gain(
    truths: Sequence[frozenset[str]], added: Sequence[frozenset[str]]
) -> npt.NDArray[np.int64]:
    """``gain[i, j] = len(added[j] & truths[i])``: terms of slot ``j`` right for record ``i``.

    Slots with the same (often empty) anchor can number in the hundreds; one intersection
    per pair was the most of scoring a reconstruction. Counted instead as a product of
    incidence matrices over the terms both sides hold, in floating point for the BLAS
    (counts far below 2**53: exact, the same integers).
    """
    if len(truths) * len(added) <= 64:
        return np.array([[len(a & t) for a in added] for t in truths], dtype=np.int64)
    held = frozenset().union(*added)
    position: dict[str, int] = {}
    for t in truths:
        for term in t & held:
            position.setdefault(term, len(position))
    if not position:
        return np.zeros((len(truths), len(added)), dtype=np.int64)
    slots = np.zeros((len(added), len(position)))
    for j, a in enumerate(added):
        slots[j, [position[term] for term in a if term in position]] = 1.0
    records = np.zeros((len(truths), len(position)))
    for i, t in enumerate(truths):
        records[i, [position[term] for term in t if term in position]] = 1.0
    return np.rint(records @ slots.T).astype(np.int64)


def _share(hits: Sequence[tuple[int, int]]) -> float:
    """Mean of found/total over the pairs with a non-zero total (0.0 when none)."""
    values = [found / total for found, total in hits if total]
    return float(np.mean(values)) if values else 0.0


def _report(pairs: list[tuple[_Truth, frozenset[str]]]) -> BreakageReport:
    exposed = [(t, added) for t, added in pairs if t.disassociated]
    placed = sum(len(added) for _, added in pairs)
    right = sum(len(added & t.disassociated) for t, added in pairs)
    # The rebuilt record once per record, not once per protected itemset of it; the
    # itemsets rebuilt counted, not listed (the mean of 0/1 values is that count over their
    # number, the same float).
    protected = 0
    rebuilt_itemsets = 0
    for t, added in pairs:
        if t.protected:
            protected += len(t.protected)
            rebuilt_itemsets += sum(map((t.anchor | added).issuperset, t.protected))
    return BreakageReport(
        accuracy=_share([(len(a & t.disassociated), len(t.disassociated)) for t, a in exposed]),
        accuracy_record_chunks=_share(
            [(len(a & t.record_chunk_terms), len(t.record_chunk_terms)) for t, a in exposed]
        ),
        accuracy_term_chunk=_share(
            [(len(a & t.term_chunk_terms), len(t.term_chunk_terms)) for t, a in exposed]
        ),
        transactions_breakage=_share([(int(bool(a & t.disassociated)), 1) for t, a in exposed]),
        km_breakage=rebuilt_itemsets / protected if protected else 0.0,
        precision=right / placed if placed else 0.0,
        records=len(exposed),
        protected_itemsets=protected,
    )

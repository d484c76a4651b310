"""The semantic audit of a disassociated release (design.md §11; thesis chapters 4-5).

The reassociation attack of chapter 4 (:func:`~app.core.attacks.reconstruct.reconstruct`)
with every selection method and scoring an audit asks for, and the random baseline, each
scored by the measures of chapter 5 (:class:`~app.core.attacks.breakage.GroundTruth`, built
once for all of them) against the publisher's result, which aligns every sub-record with
its record. No I/O: the caller passes the corpus, that result and the background corpus.

:func:`chunk_background` is what any analyst of a series of disassociated releases knows of
which terms go together; the default background of the job's audit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from app.core.attacks.audit import AuditParams, relatedness_for
from app.core.attacks.breakage import GroundTruth
from app.core.attacks.reconstruct import Method, reconstruct
from app.core.attacks.scoring import Matrix, Relatedness, Vector
from app.core.attacks.selection import Selection
from app.core.disassociation.loss import tlost
from app.core.disassociation.model import DisassociatedRelease, Disassociation
from app.core.model import Transaction
from app.core.progress import Progress, ProgressCallback

__all__ = ["CHUNK_PHASES", "READINGS", "UPDATED", "audit_disassociation", "chunk_background"]

#: Phases reported through :mod:`app.core.progress`.
CHUNK_PHASES: tuple[str, ...] = ("scoring", "reassociate")
#: The two readings of Algorithm 5, both run because neither dominates (docs/attacks.md):
#: scores against ``C_1`` as published (Table 4.5), and against anchors grown by what was
#: placed (line 6 read literally, key suffix ``+update``), stronger on k^m-anonymity.
READINGS: tuple[tuple[bool, str], ...] = ((False, ""), (True, "+update"))
#: Selections run in the ``+update`` reading, as ``benchmarks/attacks.py`` does: RGA's
#: related group is a median per anchor and per term, recomputed after every placement
#: (tens of seconds on 1,310 sentences where ABA takes one), for no gain in the benchmark.
UPDATED: tuple[Selection, ...] = ("aba", "mra")


def chunk_background(releases: Sequence[DisassociatedRelease]) -> list[list[str]]:
    """What the public layouts teach of which terms go together: every published
    sub-record (record and shared chunks), then each cluster's terms together.

    A sub-record is a true co-occurrence. Nothing links a term-chunk term to a record; the
    cluster is the finest place the release puts it with other terms (as
    :func:`~app.core.attacks.release_audit.published_background` puts private terms with
    their cluster's rows), so counting how often two terms share a cluster learns exactly
    the association the layout reveals.

    >>> from app.core.disassociation.model import PublicCluster
    >>> layout = DisassociatedRelease(2, 2, (PublicCluster(2, ((("a", "b"), ("a",)),),
    ...                                                       ("c",)),), ())
    >>> chunk_background([layout])
    [['a', 'b'], ['a'], ['a', 'b', 'c']]
    """
    background: list[list[str]] = []
    for release in releases:
        for cluster in release.clusters:
            background.extend(list(s) for chunk in cluster.record_chunks for s in chunk)
            terms = {t for chunk in cluster.record_chunks for s in chunk for t in s}
            background.append(sorted(terms | set(cluster.term_chunk)))
        for joint in release.joint_clusters:
            background.extend(list(s) for chunk in joint.shared_chunks for s in chunk)
    return background


class _Remembered:
    """``relatedness`` with every matrix it gave kept for the next attack.

    Each selection and reading asks the same matrix of each cluster (its anchors' terms
    against its chunks' terms): computed once, not once per attack (at 50,000 records the
    matrices were a quarter of the attack's time). The audit's runs hold them, about the
    size of the release's score blocks; they go with the audit. Read-only: a run that wrote
    into one would change the next.
    """

    def __init__(self, relatedness: Relatedness) -> None:
        self._relatedness = relatedness
        self._matrices: dict[tuple[tuple[str, ...], tuple[str, ...]], Matrix] = {}

    def matrix(self, rows: Sequence[str], cols: Sequence[str]) -> Matrix:
        key = (tuple(rows), tuple(cols))
        found = self._matrices.get(key)
        if found is None:
            found = self._relatedness.matrix(rows, cols)
            found.flags.writeable = False
            self._matrices[key] = found
        return found

    def pairs(self, left: Sequence[str], right: Sequence[str]) -> Vector:
        return self._relatedness.pairs(left, right)


def audit_disassociation(
    corpus: Sequence[Transaction],
    result: Disassociation,
    background: Sequence[Sequence[str]],
    params: AuditParams | None = None,
    progress: ProgressCallback | None = None,
) -> dict[str, Any]:
    """Reassociate ``result.public()`` with relatedness learnt from ``background`` and score
    every attack against ``result`` (thesis formulas 5.2-5.4).

    Parameters
    ----------
    corpus:
        The raw snapshot disassociated as ``result`` (``result``'s members index it).
    result:
        The publisher's :class:`~app.core.disassociation.model.Disassociation`.
    background:
        Transactions (token sequences) the attacker is assumed to know.
    params:
        :class:`~app.core.attacks.audit.AuditParams` (selections, embeddings, seed).
    progress:
        Called with ``(phase, overall fraction)``, phases :data:`CHUNK_PHASES`.

    Returns
    -------
    dict
        ``reassociation``: per attack (``aba-ngd``, ..., ``aba+update-ngd``,
        ``mra+update-ngd`` (:data:`UPDATED`), ..., ``random``),
        the :class:`~app.core.attacks.breakage.BreakageReport` as a dict;
        ``disassociation``: what was attacked (k, m, records, clusters, joint clusters,
        suppressed records) and its information loss ``tlost`` (thesis 3.4).
    """
    params = params or AuditParams()
    report = Progress(progress, CHUNK_PHASES)
    report("scoring")
    scorers = {name: _Remembered(r) for name, r in relatedness_for(background, params).items()}
    release = result.public()
    runs: list[tuple[str, Method, Relatedness | None, bool]] = [
        (f"{selection}{suffix}-{name}", selection, relatedness, update)
        for name, relatedness in scorers.items()
        for update, suffix in READINGS
        for selection in params.selections
        if not update or selection in UPDATED
    ]
    runs.append(("random", "random", None, False))
    truth = GroundTruth(corpus, result)
    report("reassociate")
    measured: dict[str, dict[str, Any]] = {}
    for done, (key, method, relatedness, update) in enumerate(runs):
        rebuilt = reconstruct(release, relatedness, method, seed=params.seed, update=update)
        measured[key] = asdict(truth.measure(rebuilt))
        report("reassociate", (done + 1) / len(runs))
    return {
        "reassociation": measured,
        "disassociation": {
            "k": result.params.k,
            "m": result.params.m,
            "records": sum(len(c.members) for c in result.clusters),
            "clusters": len(result.clusters),
            "joint_clusters": len(result.joint_clusters),
            "suppressed_records": len(result.suppressed),
            "tlost": tlost(corpus, result),
        },
    }

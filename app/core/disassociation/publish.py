"""Disassociation as a publication method of a series (design.md §11): one corpus, one release.

Disassociation makes a single-release claim (k^m-anonymity of every record chunk), so it reads
nothing of the series' past but the release number. Its public release is the chunk layout
(:class:`~app.core.disassociation.model.DisassociatedRelease`), carried by a
:class:`~app.core.model.PublishedRelease` without Anony-style clusters.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from app.core.disassociation.disassociate import disassociate
from app.core.disassociation.loss import tlost
from app.core.disassociation.params import DisassociationParams
from app.core.history import SeriesHistory
from app.core.model import Publication, PublishedRelease, ReleaseLedger, Transaction
from app.core.progress import Progress, ProgressCallback

__all__ = ["PHASES", "publish_disassociation"]

#: Progress phases of a disassociation job (docs/api.md ``phase``).
PHASES: tuple[str, ...] = ("disassociate", "verify", "store")


def publish_disassociation(
    history: SeriesHistory,
    corpus: Sequence[Transaction],
    private_terms: frozenset[str],
    params: DisassociationParams,
    progress: ProgressCallback | None = None,
) -> Publication:
    """Disassociate ``corpus`` (thesis chapter 3) as release ``history.next_release_no``.

    Every term is protected alike (k^m-anonymity knows no private terms); ``private_terms``
    is only recorded on the release. Transactions labelled with a ``cluster`` are clustered
    as labelled (design.md §2.1), others by horizontal partitioning (Algorithms 1-3).

    Returns
    -------
    Publication
        ``release.layout`` is the public chunk layout, ``release.clusters`` is empty; the
        report gives ``tlost`` (thesis 3.4), cluster counts and suppressed records.

    Examples
    --------
    >>> corpus = [Transaction.of(t) for t in (["a", "b"], ["a", "b"], ["a", "c"])]
    >>> p = publish_disassociation(SeriesHistory(), corpus, frozenset({"c"}),
    ...                            DisassociationParams(k=2, max_cluster_size=4))
    >>> p.release.layout.to_json()["clusters"][0]["record_chunks"]
    [[['a'], ['a', 'b'], ['a', 'b']]]
    >>> p.report["tlost"]
    0.0
    """
    report = Progress(progress, PHASES)
    report("disassociate")
    started = time.perf_counter()
    result = disassociate(corpus, params, _labelled_partition(corpus))
    report("verify")
    layout = result.public()
    release = PublishedRelease(
        release_no=history.next_release_no,
        clusters=[],
        global_bag={},
        population_rates={},
        private_terms=private_terms,
        layout=layout,
    )
    summary: dict[str, object] = {
        "method": "disassociation",
        "k": params.k,
        "m": params.m,
        "clusters": len(result.clusters),
        "joint_clusters": len(result.joint_clusters),
        "records": sum(len(c.members) for c in result.clusters),
        "suppressed_records": len(result.suppressed),
        "tlost": round(tlost(corpus, result), 6),
        "counterfeits": 0,
        "seconds": {"disassociate": round(time.perf_counter() - started, 4)},
    }
    # The alignment of every chunk's sub-records with their records: the ground truth of the
    # job's semantic audit (design.md §11) and exactly what the public layout hides, so it is
    # never stored; it lives as long as the job's publication in memory.
    return Publication(release, ReleaseLedger(clusters=[]), summary, extras=result)


def _labelled_partition(corpus: Sequence[Transaction]) -> list[list[int]] | None:
    """The client's clusters, in order of first appearance; ``None`` when unlabelled
    (:func:`~app.core.validation.validate_corpus` allows all or none)."""
    if not corpus or corpus[0].cluster is None:
        return None
    clusters: dict[str, list[int]] = {}
    for i, transaction in enumerate(corpus):
        clusters.setdefault(str(transaction.cluster), []).append(i)
    return list(clusters.values())

"""The private ledger of a locally published release, as JSON, and the public release read
back (``serialpub publish-local`` writes them, ``serialpub attack`` reads them).

The ledger is the publisher's secret (which rows are counterfeits, whose row is whose):
``publish-local`` writes it under ``private/``, apart from the public files, so that a
directory of releases can be shared without it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.core.model import (
    ClusterLedger,
    PublishedCluster,
    PublishedRelease,
    ReleaseLedger,
    make_row,
)

__all__ = ["ledger_document", "read_ledger", "read_release"]


def ledger_document(release: PublishedRelease, ledger: ReleaseLedger) -> dict[str, Any]:
    """The private side of ``release``, aligned with its clusters."""
    return {
        "release_no": release.release_no,
        "private_terms": sorted(release.private_terms),
        "clusters": [
            {
                "cluster_id": cluster.cluster_id,
                "counterfeit_rows": book.counterfeit_rows,
                "bp": book.bp,
                "fp1": book.fp1,
                "fp2": book.fp2,
                "individuals": book.individuals,
                "suppressed": book.suppressed,
            }
            for cluster, book in zip(release.clusters, ledger.clusters, strict=True)
        ],
        "global_bag_counterfeits": ledger.global_bag_counterfeits,
        "suppressed": ledger.suppressed,
        "randomness": ledger.randomness,
    }


def read_ledger(document: Mapping[str, Any]) -> tuple[ReleaseLedger, frozenset[str]]:
    """A :func:`ledger_document` back: the ledger and the release's private terms."""
    clusters = [
        ClusterLedger(
            counterfeit_rows=list(c["counterfeit_rows"]),
            bp=c["bp"],
            fp1=c["fp1"],
            fp2=c["fp2"],
            individuals=list(c["individuals"]),
            suppressed=dict(c["suppressed"]),
        )
        for c in document["clusters"]
    ]
    ledger = ReleaseLedger(
        clusters,
        dict(document["global_bag_counterfeits"]),
        dict(document["suppressed"]),
        dict(document.get("randomness", {})),
    )
    return ledger, frozenset(document["private_terms"])


def read_release(document: Mapping[str, Any]) -> PublishedRelease:
    """The public JSON of a row-publishing release (docs/api.md) as the core's release.

    >>> doc = {"release_no": 1, "clusters": [{"cluster_id": "c1", "rows": [["b", "a"]],
    ...        "private_terms": {"HIV": 1}, "global_share": {}, "counterfeits": 0}],
    ...        "global_bag": {}, "population_rates": {"HIV": 0.5}}
    >>> read_release(doc).clusters[0].rows
    [('a', 'b')]
    """
    clusters = [
        PublishedCluster(
            c["cluster_id"],
            [make_row(row) for row in c["rows"]],
            dict(c["private_terms"]),
            dict(c["global_share"]),
            c["counterfeits"],
        )
        for c in document["clusters"]
    ]
    return PublishedRelease(
        release_no=document["release_no"],
        clusters=clusters,
        global_bag=dict(document["global_bag"]),
        population_rates=dict(document["population_rates"]),
        global_counterfeits=document.get("global_counterfeits", 0),
        label=document.get("label"),
        counterfeit_rows=document.get("counterfeit_rows"),
        suppression_beyond_budget=bool(document.get("suppression_beyond_budget", False)),
    )

"""The private ledger of a locally published release, as JSON, and the public release read
back (``serialpub publish-local`` writes them, ``serialpub attack`` reads them).

The ledger is the publisher's secret (which rows are counterfeits, whose row is whose, the
secret each release's random choices came from): ``publish-local --out DIR`` writes it into
:func:`default_ledger_dir` (``DIR.private/``, beside ``DIR``, never inside it), so that the
public folder can be copied, archived or committed without it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from app.core.model import (
    ClusterLedger,
    PublishedCluster,
    PublishedRelease,
    ReleaseLedger,
    make_row,
)

__all__ = ["LEDGER_SUFFIX", "default_ledger_dir", "ledger_document", "read_ledger", "read_release"]

#: What ``publish-local`` appends to the public folder's name for its ledgers' folder.
LEDGER_SUFFIX = ".private"


def default_ledger_dir(public: Path) -> Path:
    """Where the ledgers of the releases in ``public`` go by default: the sibling folder named
    as private, ``releases/`` -> ``releases.private/``.

    >>> default_ledger_dir(Path("out/releases"))
    PosixPath('out/releases.private')
    >>> default_ledger_dir(Path("/srv/b1/")).as_posix()
    '/srv/b1.private'
    """
    if public.name in ("", ".", ".."):  # ".", "a/..": the folder's own name, from its path
        public = Path(os.path.abspath(public))
    return public.with_name(public.name + LEDGER_SUFFIX)


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

"""A release without some of its rows, as an adversary who takes them for counterfeits reads it:
what :mod:`~app.core.attacks.frequency_risk` and
:mod:`~app.core.attacks.mixture_risk` run the paper's serial risk on."""

from __future__ import annotations

from collections.abc import Sequence

from app.core.model import PublishedCluster, PublishedRelease

__all__ = ["discount_release"]


def _reduced(cluster: PublishedCluster, removed: Sequence[int]) -> PublishedCluster:
    gone = set(removed)
    rows = [row for p, row in enumerate(cluster.rows) if p not in gone]
    n = len(rows)
    share = {s: min(k, n) for s, k in cluster.global_share.items()}
    counts = {s: max(0, min(k, n - share.get(s, 0))) for s, k in cluster.private_counts.items()}
    return PublishedCluster(cluster.cluster_id, rows, counts, share, 0)


def discount_release(
    release: PublishedRelease, removed: Sequence[Sequence[int]]
) -> PublishedRelease:
    """``release`` without the rows ``removed`` (per cluster, positions), private counts
    kept but capped at the new size, counterfeit counts 0; the global bag and population
    rates as published."""
    return PublishedRelease(
        release_no=release.release_no,
        clusters=[_reduced(c, r) for c, r in zip(release.clusters, removed, strict=True)],
        global_bag=dict(release.global_bag),
        population_rates=dict(release.population_rates),
        private_terms=release.private_terms,
        global_counterfeits=release.global_counterfeits,
        label=release.label,
    )

"""The public JSON of a release (API.md, ``GET /v1/series/{name}/releases/{no}``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.core.model import PublishedCluster, PublishedRelease
from app.core.risk import ReleaseRisk

__all__ = ["cluster_document", "release_document", "risk_document"]


def cluster_document(cluster: PublishedCluster) -> dict[str, Any]:
    """One published cluster: rows, private-term counts, global share, BP+FP1 counterfeits."""
    return {
        "cluster_id": cluster.cluster_id,
        "rows": [list(row) for row in cluster.rows],
        "private_terms": dict(cluster.private_counts),
        "global_share": dict(cluster.global_share),
        "counterfeits": cluster.counterfeits,
    }


def release_document(
    release: PublishedRelease, series: str, method: str, params: Mapping[str, Any]
) -> dict[str, Any]:
    """The analyst's view of a release; nothing private (SPEC 3)."""
    return {
        "series": series,
        "release_no": release.release_no,
        "label": release.label,
        "method": method,
        "params": dict(params),
        "n_rows": release.n_rows,
        "population_rates": dict(release.population_rates),
        "global_bag": dict(release.global_bag),
        "global_counterfeits": release.global_counterfeits,
        "clusters": [cluster_document(c) for c in release.clusters],
    }


def risk_document(risk: ReleaseRisk) -> dict[str, Any]:
    """The auditor's risk summary of a release (API.md risk endpoint, without perturbation)."""
    return {
        "release_no": risk.release_no,
        "r_th": risk.r_th,
        "max_serial_risk": risk.max_serial_risk,
        "n_rows": risk.n_rows,
        "rows_over_threshold": risk.rows_over_threshold,
        "by_term": risk.by_term,
        "histogram": [{"lo": lo, "hi": hi, "count": n} for lo, hi, n in risk.histogram],
    }

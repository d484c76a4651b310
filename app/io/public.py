"""The public JSON of a release (docs/api.md, ``GET /v1/series/{name}/releases/{no}``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from app.core.guarantees import guarantee_of
from app.core.model import PublishedCluster, PublishedRelease
from app.core.risk.assess import ReleaseRisk

__all__ = [
    "cluster_document",
    "header_counterfeit_rows",
    "layout_parts",
    "public_counterfeit_rows",
    "release_document",
    "release_header",
    "risk_document",
]


def cluster_document(cluster: PublishedCluster) -> dict[str, Any]:
    """One published cluster: rows, private-term counts, global share, its counterfeit rows.

    Rows stay tuples: ``json`` writes them as arrays, and a large release is not copied.
    """
    return {
        "cluster_id": cluster.cluster_id,
        "rows": cluster.rows,
        "private_terms": cluster.private_counts,
        "global_share": cluster.global_share,
        "counterfeits": cluster.counterfeits,
    }


def release_header(
    release: PublishedRelease,
    series: str,
    method: str,
    params: Mapping[str, Any],
    *,
    release_no: int | None = None,
    label: str | None = None,
) -> dict[str, Any]:
    """Everything of the public release but its clusters (the first NDJSON line)."""
    return {
        "series": series,
        "release_no": release.release_no if release_no is None else release_no,
        "label": release.label if label is None else label,
        "method": method,
        "params": dict(params),
        # What the release promises (app.core.guarantees): "true_rows", "paper", "wong", "none".
        "guarantee": guarantee_of(method, params).name,
        "n_rows": release.n_rows,
        "population_rates": release.population_rates,
        "global_bag": release.global_bag,
        "global_counterfeits": release.global_counterfeits,
        # Every counterfeit row of the release, FP2's and the repair's included;
        # the clusters' ``counterfeits`` count BP + FP1's only (design.md §3). A release
        # stored before the total was kept prints the sum of its clusters' counts; one published
        # under ``counterfeit_counts: paper`` prints null (no public figure counts FP2's rows).
        "counterfeit_rows": header_counterfeit_rows(release, params),
        # Copies were suppressed beyond max_suppression (an escalated release): a
        # count's upper bound from the budget does not hold for this release.
        "suppression_beyond_budget": release.suppression_beyond_budget,
    }


def header_counterfeit_rows(release: PublishedRelease, params: Mapping[str, Any]) -> int | None:
    """The release header's ``counterfeit_rows``: ``None`` for a release whose series
    publishes the clusters' counts only (``counterfeit_counts: paper``), else
    :func:`public_counterfeit_rows`."""
    if release.counterfeit_rows is None and params.get("counterfeit_counts") == "paper":
        return None
    return public_counterfeit_rows(release)


def public_counterfeit_rows(release: PublishedRelease) -> int:
    """The release's published count of counterfeit rows (clusters' rows, not the bag's)."""
    if release.counterfeit_rows is not None:
        return release.counterfeit_rows
    return sum(c.counterfeits for c in release.clusters)


def layout_parts(
    release: PublishedRelease,
    series: str,
    method: str,
    params: Mapping[str, Any],
    *,
    release_no: int | None = None,
    label: str | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A release in its method's own layout (``release.layout``): the header (the first
    NDJSON line) and the clusters (one line each).

    The header replaces the Anony fields (rows, bag, rates) by the layout's own, and counts
    the records its clusters publish (``n_records``).
    """
    assert release.layout is not None, "only for a method with its own layout"
    layout = release.layout.to_json()
    clusters: list[dict[str, Any]] = layout.pop("clusters")
    layout.pop("method", None)
    header = {
        "series": series,
        "release_no": release.release_no if release_no is None else release_no,
        "label": release.label if label is None else label,
        "method": method,
        "params": dict(params),
        "n_records": sum(int(c.get("size", 0)) for c in clusters),
        **layout,
    }
    return header, clusters


def release_document(
    release: PublishedRelease, series: str, method: str, params: Mapping[str, Any]
) -> dict[str, Any]:
    """The analyst's view of a release; nothing private (design.md §3)."""
    if release.layout is not None:
        header, clusters = layout_parts(release, series, method, params)
        return {**header, "clusters": clusters}
    document = release_header(release, series, method, params)
    document["clusters"] = [cluster_document(c) for c in release.clusters]
    return document


def risk_document(risk: ReleaseRisk) -> dict[str, Any]:
    """The auditor's risk summary of a release (docs/api.md risk endpoint, without perturbation)."""
    return {
        "release_no": risk.release_no,
        "r_th": risk.r_th,
        "max_serial_risk": risk.max_serial_risk,
        "n_rows": risk.n_rows,
        "rows_over_threshold": risk.rows_over_threshold,
        "by_term": risk.by_term,
        "histogram": [{"lo": lo, "hi": hi, "count": n} for lo, hi, n in risk.histogram],
        "published_total": (
            None if risk.published_total is None else dataclasses.asdict(risk.published_total)
        ),
    }

"""Serial risk of published rows (design.md §4; formulas 9, 12-15 and section 2.3.2).

Two compositions are computed for every row and private term s:

- *cluster* composition: the row's cluster against its cover Ω(C*), every overlapping cluster
  of every other release;
- *global* composition: the row's whole release, taken as one cluster, against every other
  whole release.

The serial risk is ``max(β_cluster, β_global) / ss(s)`` (formula 15) with ``ss`` the published
population rate of the row's release. Rows with the same non-private set in the same cluster
share their posterior, so work is per distinct row, and global posteriors are per *pattern*
(how a row sits in each other release's overlap), of which a release has only a few.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from app.core.model import PublishedRelease, Row
from app.core.risk.likelihood import log_likelihood_ratio
from app.core.risk.overlap import Overlap, cluster_cover, overlap_range, release_overlap
from app.core.risk.pattern_evidence import PatternEvidence, inputs_of, pattern_evidence
from app.core.risk.posterior import Evidence, best_ratio
from app.core.risk.state import ClusterRef, SeriesState
from app.core.risk.total_exposure import TotalExposure, estimate_total_exposure

__all__ = [
    "RowRisk",
    "ReleaseRisk",
    "GlobalPosteriors",
    "cluster_posteriors",
    "global_posteriors",
    "serial_risk",
    "assess_release",
    "assess_series",
    "release_risk_from_state",
]

#: z allowed for a row w.r.t. one overlap: only 0, only 1, or both (design.md §4 decision).
_Z_OPTIONS: dict[int, tuple[int, ...]] = {0: (0,), 1: (1,), 2: (0, 1)}


@dataclass(slots=True)
class RowRisk:
    """Serial risk of one published row: its highest risk over the private terms."""

    cluster_id: str
    row_index: int
    row: Row
    serial_risk: float
    term: str | None


@dataclass(slots=True)
class ReleaseRisk:
    """Per-release risk summary (docs/api.md risk endpoint)."""

    release_no: int
    r_th: float
    max_serial_risk: float
    n_rows: int
    rows_over_threshold: int
    by_term: dict[str, float]
    histogram: list[tuple[float, float, int]]
    rows: list[RowRisk] = field(default_factory=list)
    #: The risk to an adversary who reads the release's published counterfeit total, a
    #: first-order estimate (:mod:`app.core.risk.total_exposure`); ``None`` when the release
    #: publishes no total or its clusters' counts place all of it.
    published_total: TotalExposure | None = None


@dataclass(slots=True)
class GlobalPosteriors:
    """β_global of a release: each distinct row's pattern and each pattern's β per term."""

    pattern_of: dict[Row, int]
    betas: list[dict[str, float]]


def _z_code(in_overlap: int, in_cluster: int) -> int:
    if in_overlap == 0:
        return 0
    return 1 if in_overlap == in_cluster else 2


def _choose(lr0: float, lr1: float, code: int) -> float:
    if code == 0:
        return lr0
    if code == 1:
        return lr1
    return best_ratio((lr0, lr1))


def cluster_posteriors(
    state: SeriesState,
    ref: ClusterRef,
    only: Iterable[str] | None = None,
    cover: list[Overlap] | None = None,
) -> dict[Row, dict[str, float]]:
    """β_cluster of each distinct row of a cluster for each private term it holds (formula 12).

    For a row whose set the cluster holds more often than the overlap does, the row may be
    inside or outside O; the adversary takes the larger posterior (design.md §4 decision).
    ``only`` restricts the terms computed. ``cover``, when given, must be what
    :func:`~app.core.risk.overlap.cluster_cover` returns for the cluster as the series stands
    (a caller that keeps part of it).
    """
    cluster = state.cluster(ref)
    terms = cluster.terms() if only is None else cluster.terms() & set(only)
    if not terms:
        return {}
    if cover is None:
        cover = cluster_cover(state, ref)
    n = cluster.n
    # Which overlaps hold each row, and the row's z code there (independent of s).
    membership: dict[Row, list[tuple[int, int]]] = {}
    for i, overlap in enumerate(cover):
        for row, shared in overlap.rows.items():
            membership.setdefault(row, []).append((i, _z_code(shared, cluster.counts[row])))
    others = [state.cluster(overlap.other) for overlap in cover]
    result: dict[Row, dict[str, float]] = {row: {} for row in cluster.counts}
    for s in terms:
        n_s = cluster.n_s(s)
        alpha = n_s / n
        base = Evidence()
        ratios: list[tuple[float, float] | None] = []
        for overlap, other in zip(cover, others, strict=True):
            found = overlap_range(n_s, n, other.n_s(s), other.n, overlap.size)
            if found is None:
                ratios.append(None)
                continue
            r1, r2 = found
            lr0 = log_likelihood_ratio(n_s, n, overlap.size, r1, r2, 0)
            ratios.append((lr0, log_likelihood_ratio(n_s, n, overlap.size, r1, r2, 1)))
            base.add(lr0)
        outside = base.posterior(alpha)
        for row in cluster.counts:
            held = membership.get(row)
            if not held:
                result[row][s] = outside
                continue
            evidence = base.copy()
            for i, code in held:
                pair = ratios[i]
                if pair is not None:
                    evidence.add(pair[0], -1)
                    evidence.add(_choose(pair[0], pair[1], code))
            result[row][s] = evidence.posterior(alpha)
    return result


def global_posteriors(state: SeriesState, j: int) -> GlobalPosteriors:
    """β_global of the rows of release ``j`` against every other whole release (2.3.2).

    The release, taken as one cluster, has as cover its overlaps with every other whole
    release, and formula 12 multiplies over them like over any cover (design.md §4, "No weaker
    adversary"). A row's posterior depends only on its z code in each overlap, so it is
    computed once per pattern of codes, of which a release has few.
    """
    release = state.releases[j]
    others = [k for k in range(len(state.releases)) if k != j]
    overlaps = [release_overlap(state, j, k) for k in others]
    patterns: dict[tuple[int, ...], int] = {}
    pattern_of: dict[Row, int] = {}
    for row, mult in release.row_counts.items():
        key = tuple(_z_code(ov.get(row, 0), mult) for ov in overlaps)
        pattern_of[row] = patterns.setdefault(key, len(patterns))
    totals = release.totals()
    n = release.n
    sides = [
        (state.releases[k].totals(), state.releases[k].n, sum(ov.values()))
        for k, ov in zip(others, overlaps, strict=True)
    ]
    betas: list[dict[str, float]] = [{} for _ in patterns]
    if not patterns:
        return GlobalPosteriors(pattern_of, betas)
    # codes[p, r]: pattern p's z code in other release r, every pattern summed at once.
    codes = np.array(list(patterns), dtype=np.intp).reshape(len(patterns), len(others))
    for s, n_s in totals.items():
        alpha = min(n_s / n, 1.0)
        if alpha <= 0.0 or alpha >= 1.0:
            # β is the prior's end whatever the evidence (Evidence.posterior).
            for p in range(len(patterns)):
                betas[p][s] = 0.0 if alpha <= 0.0 else 1.0
            continue
        _, _, ranges = inputs_of(s, n_s, n, sides)
        for p, beta in enumerate(_posteriors(alpha, pattern_evidence(n_s, n, ranges, codes))):
            betas[p][s] = beta
    return GlobalPosteriors(pattern_of, betas)


def _posteriors(alpha: float, evidence: PatternEvidence) -> list[float]:
    """Formula 12 for each pattern of ``evidence``, as :meth:`Evidence.posterior` computes it
    for one (0 < α < 1): certain evidence against first, then for, else the logistic of the
    log-odds with Python's ``math``."""
    base = math.log(alpha) - math.log1p(-alpha)
    out: list[float] = []
    for logit, no, yes in zip(
        (base + evidence.total).tolist(),
        (evidence.certain_against > 0).tolist(),
        (evidence.certain_for > 0).tolist(),
        strict=True,
    ):
        if no:
            out.append(0.0)
        elif yes:
            out.append(1.0)
        elif logit >= 0:
            out.append(1.0 / (1.0 + math.exp(-logit)))
        else:
            e = math.exp(logit)
            out.append(e / (1.0 + e))
    return out


def serial_risk(beta: float, rate: float) -> float:
    """Formula 15: ``β / ss(s)``; a posterior on a term of rate 0 is unbounded."""
    if beta <= 0.0:
        return 0.0
    return beta / rate if rate > 0 else math.inf


def _max_risk(betas: dict[str, float], rates: dict[str, float]) -> tuple[float, str | None]:
    best, term = 0.0, None
    for s, beta in betas.items():
        risk = serial_risk(beta, rates.get(s, 0.0))
        if risk > best:
            best, term = risk, s
    return best, term


def _histogram(values: Sequence[float], r_th: float) -> list[tuple[float, float, int]]:
    finite = [v for v in values if math.isfinite(v)]
    upper = max([r_th, *finite]) if finite else r_th
    width = upper / 10
    bins = [0] * 10
    for v in values:
        bins[min(int(v / width), 9) if math.isfinite(v) else 9] += 1
    return [(round(i * width, 6), round((i + 1) * width, 6), bins[i]) for i in range(10)]


def release_risk_from_state(
    state: SeriesState,
    j: int,
    r_th: float,
    *,
    with_rows: bool = True,
    published_total: int | None = None,
) -> ReleaseRisk:
    """Risk of every row of release ``j`` given every other release in ``state``;
    ``published_total``: the counterfeit rows the release publishes in its total (K), for
    :attr:`ReleaseRisk.published_total`."""
    release = state.releases[j]
    rates = release.rates
    glob = global_posteriors(state, j)
    pattern_max = [_max_risk(b, rates) for b in glob.betas]
    by_term: dict[str, float] = {}
    for betas in glob.betas:
        _merge_terms(by_term, betas, rates)
    rows: list[RowRisk] = []
    values: list[float] = []
    for c, cluster in enumerate(release.clusters):
        posteriors = cluster_posteriors(state, (j, c))
        row_max: dict[Row, tuple[float, str | None]] = {}
        for row in cluster.counts:
            local = _max_risk(posteriors.get(row, {}), rates)
            _merge_terms(by_term, posteriors.get(row, {}), rates)
            row_max[row] = max(local, pattern_max[glob.pattern_of[row]], key=lambda t: t[0])
        for i, row in enumerate(cluster.rows):
            risk, term = row_max[row]
            values.append(risk)
            if with_rows:
                rows.append(RowRisk(cluster.cluster_id, i, row, risk, term))
    return ReleaseRisk(
        release_no=release.release_no,
        r_th=r_th,
        max_serial_risk=max(values, default=0.0),
        n_rows=len(values),
        rows_over_threshold=sum(1 for v in values if v > r_th * (1 + 1e-9)),
        by_term=dict(sorted(by_term.items())),
        histogram=_histogram(values, r_th),
        rows=rows,
        published_total=estimate_total_exposure(
            published_total,
            sum(cluster.published_counterfeits for cluster in release.clusters),
            values,
            r_th,
        ),
    )


def _merge_terms(
    by_term: dict[str, float], betas: dict[str, float], rates: dict[str, float]
) -> None:
    for s, beta in betas.items():
        risk = serial_risk(beta, rates.get(s, 0.0))
        if risk > by_term.get(s, -1.0):
            by_term[s] = risk


def assess_release(
    releases: Sequence[PublishedRelease], index: int, r_th: float, *, with_rows: bool = True
) -> ReleaseRisk:
    """Serial risk of ``releases[index]`` as of now, counting every other release given."""
    return release_risk_from_state(
        SeriesState.from_published(releases),
        index,
        r_th,
        with_rows=with_rows,
        published_total=releases[index].counterfeit_rows,
    )


def assess_series(
    releases: Sequence[PublishedRelease],
    r_th: float,
    *,
    with_rows: bool = True,
    only: Iterable[int] | None = None,
) -> list[ReleaseRisk]:
    """:func:`assess_release` for every release of a series (one shared index), or for the
    positions ``only`` names, in that order. Each release is judged against every other
    whatever ``only`` says: a part of the series judged in one process is the same as in a
    whole judgement (the split that ``serialpub verify --jobs`` makes)."""
    state = SeriesState.from_published(releases)
    positions = range(len(state.releases)) if only is None else only
    return [
        release_risk_from_state(
            state, j, r_th, with_rows=with_rows, published_total=releases[j].counterfeit_rows
        )
        for j in positions
    ]


def violating_rows(
    state: SeriesState, j: int, r_th: float, refs: Iterable[int] | None = None
) -> list[tuple[ClusterRef, Row, str, float, str]]:
    """Rows of release ``j`` over ``r_th``: ``(cluster, row, term, risk, composition)``.

    ``refs`` limits the cluster composition to those cluster positions (the global one is
    always checked for every row).
    """
    release = state.releases[j]
    rates = release.rates
    limit = r_th * (1 + 1e-9)
    found: list[tuple[ClusterRef, Row, str, float, str]] = []
    glob = global_posteriors(state, j)
    positions = range(len(release.clusters)) if refs is None else refs
    for c in positions:
        for row, betas in cluster_posteriors(state, (j, c)).items():
            for s, beta in betas.items():
                risk = serial_risk(beta, rates.get(s, 0.0))
                if risk > limit:
                    found.append(((j, c), row, s, risk, "cluster"))
    over: list[list[tuple[str, float]]] = [
        [(s, r) for s, b in betas.items() if (r := serial_risk(b, rates.get(s, 0.0))) > limit]
        for betas in glob.betas
    ]
    if not any(over):
        return found
    for c, cluster in enumerate(release.clusters):
        for row in cluster.counts:
            for s, risk in over[glob.pattern_of[row]]:
                found.append(((j, c), row, s, risk, "global"))
    return found

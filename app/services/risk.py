"""Serial risk, covers and the statistics file, computed on demand by the core (design.md §4, 6).

Risk depends on every release of the series, so results are cached per (series, number of
releases, release, r_th): publishing a new release changes the key, nothing else can.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import OrderedDict
from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncSession

from app.core.errors import ErrorCode
from app.core.guarantees import Guarantee, guarantee_of
from app.core.model import PublishedRelease
from app.core.params import PublishParams
from app.core.risk.assess import ReleaseRisk, assess_release
from app.core.risk.overlap import release_cover
from app.db.models import Release, Series
from app.db.repositories.releases import ReleaseRepository
from app.db.repositories.statistics import statistics_of
from app.errors import NotFound
from app.io.public import public_counterfeit_rows
from app.schemas.risk import (
    CoverEntryOut,
    GuaranteeOut,
    HistogramBin,
    Perturbation,
    PublishedTotalExposure,
    RiskSummary,
    RowRiskOut,
    RowRiskPage,
    StatisticsEntry,
    StatisticsOut,
    TermStatistics,
)
from app.services.history import load_public_releases
from app.services.identity import individual_key
from app.services.in_clear import rows_in_clear
from app.services.series import effective_params, risk_threshold

__all__ = [
    "assess",
    "risk_summary",
    "summary_for",
    "release_risk",
    "release_risk_as_of",
    "series_risk",
    "risk_rows",
    "cover",
    "statistics",
    "clear_risk_cache",
]

_CACHE: OrderedDict[tuple[int, int, int, float], ReleaseRisk] = OrderedDict()
_CACHE_SIZE = 64


def clear_risk_cache() -> None:
    _CACHE.clear()


def default_r_th(series: Series) -> float:
    """The method's ``r_th``; for a method without a serial claim (disassociation, whose
    releases publish no Anony rows), the Anony family's default."""
    found = risk_threshold(series)
    return PublishParams().r_th if found is None else found


async def assess(
    series_id: int, releases: Sequence[PublishedRelease], index: int, r_th: float
) -> ReleaseRisk:
    """``app.core.risk.assess.assess_release`` in a worker thread, cached."""
    key = (series_id, len(releases), index, float(r_th))
    found = _CACHE.get(key)
    if found is None:
        found = await asyncio.to_thread(assess_release, list(releases), index, r_th)
        _CACHE[key] = found
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(key)
    return found


def risk_summary(
    risk: ReleaseRisk,
    release: PublishedRelease,
    counterfeits: int,
    published_only: bool,
    suppressed: dict[str, int] | None = None,
    in_clear: dict[str, int] | None = None,
    *,
    guarantee: Guarantee,
) -> RiskSummary:
    """The docs/api.md risk body from a core ``ReleaseRisk``; ``in_clear``: rows of the release
    that print a term private as of now, per term (:func:`in_clear_as_of_now`)."""
    return RiskSummary(
        release_no=release.release_no,
        r_th=risk.r_th,
        max_serial_risk=risk.max_serial_risk,
        n_rows=risk.n_rows,
        rows_over_threshold=risk.rows_over_threshold,
        by_term=dict(risk.by_term),
        histogram=[HistogramBin(lo=lo, hi=hi, count=n) for lo, hi, n in risk.histogram],
        perturbation=Perturbation(
            counterfeits=counterfeits,
            rate=round(counterfeits / risk.n_rows, 6) if risk.n_rows else 0.0,
            published_only=published_only,
        ),
        guarantee=GuaranteeOut(**dataclasses.asdict(guarantee)),
        suppressed=suppressed,
        private_terms_in_clear=dict(in_clear or {}),
        published_total=(
            None
            if risk.published_total is None
            else PublishedTotalExposure(**dataclasses.asdict(risk.published_total))
        ),
    )


def in_clear_as_of_now(series: Series, release: PublishedRelease) -> dict[str, int]:
    """Rows of ``release`` that print in clear a term the series holds private now (made
    private by a later release), per term (:mod:`app.services.in_clear`)."""
    return rows_in_clear(release, frozenset(series.private_terms), series.private_match)  # type: ignore[arg-type]


def public_counterfeits(release: PublishedRelease) -> int:
    """Counterfeit rows and bag counterfeits the release publishes (its total)."""
    return public_counterfeit_rows(release) + release.global_counterfeits


async def counterfeits_for(
    session: AsyncSession, model: Release, release: PublishedRelease, sees_private: bool
) -> tuple[int, bool]:
    """All counterfeit rows for auditors; the published ones for everybody else."""
    if sees_private:
        rows = await ReleaseRepository(session).counterfeit_rows(model.id)
        return rows + release.global_counterfeits, False
    return public_counterfeits(release), True


async def suppressed_for(
    session: AsyncSession, model: Release, sees_private: bool
) -> dict[str, int] | None:
    """Suppressed copies per term for auditors and admins; ``None`` for everybody else."""
    if not sees_private:
        return None
    return await ReleaseRepository(session).suppressed(model.id)


async def summary_for(
    session: AsyncSession,
    series: Series,
    model: Release,
    release: PublishedRelease,
    risk: ReleaseRisk,
    sees_private: bool,
) -> RiskSummary:
    """The risk body of ``release`` for its audience: :func:`risk_summary` with the
    counterfeits and suppressed copies it may see and the terms it prints in clear now."""
    cf, public = await counterfeits_for(session, model, release, sees_private)
    return risk_summary(
        risk,
        release,
        cf,
        public,
        await suppressed_for(session, model, sees_private),
        in_clear_as_of_now(series, release),
        guarantee=guarantee_of(series.method, model.params),
    )


async def _release_index(
    session: AsyncSession, series: Series, release_no: int
) -> tuple[list[Release], list[PublishedRelease], int]:
    models, releases = await load_public_releases(session, series)
    index = next((i for i, m in enumerate(models) if m.release_no == release_no), None)
    if index is None:
        raise NotFound(
            f"series {series.name!r} has no release {release_no}",
            {"series": series.name, "release_no": release_no},
        )
    return models, releases, index


async def release_risk(
    session: AsyncSession, series: Series, release_no: int, r_th: float | None, sees_private: bool
) -> RiskSummary:
    models, releases, i = await _release_index(session, series, release_no)
    risk = await assess(series.id, releases, i, r_th or default_r_th(series))
    return await summary_for(session, series, models[i], releases[i], risk, sees_private)


async def release_risk_as_of(
    session: AsyncSession, series: Series, release_no: int, r_th: float, sees_private: bool
) -> tuple[int, RiskSummary]:
    """The risk summary and the number of releases it counts (its cache key)."""
    models, releases, i = await _release_index(session, series, release_no)
    risk = await assess(series.id, releases, i, r_th)
    return len(models), await summary_for(
        session, series, models[i], releases[i], risk, sees_private
    )


async def series_risk(
    session: AsyncSession, series: Series, r_th: float | None, sees_private: bool
) -> list[RiskSummary]:
    models, releases = await load_public_releases(session, series)
    result = []
    for i, (model, release) in enumerate(zip(models, releases, strict=True)):
        risk = await assess(series.id, releases, i, r_th or default_r_th(series))
        result.append(await summary_for(session, series, model, release, risk, sees_private))
    return result


async def risk_rows(
    session: AsyncSession,
    series: Series,
    release_no: int,
    r_th: float | None,
    offset: int,
    limit: int,
) -> RowRiskPage:
    _, releases, i = await _release_index(session, series, release_no)
    risk = await assess(series.id, releases, i, r_th or default_r_th(series))
    rows = risk.rows
    return RowRiskPage(
        release_no=release_no,
        offset=offset,
        limit=limit,
        total=len(rows),
        rows=[
            RowRiskOut(
                cluster_id=r.cluster_id, row=list(r.row), serial_risk=r.serial_risk, term=r.term
            )
            for r in rows[offset : offset + limit]
        ],
    )


async def cover(session: AsyncSession, series: Series, release_no: int) -> list[CoverEntryOut]:
    _, releases, i = await _release_index(session, series, release_no)
    entries = await asyncio.to_thread(release_cover, releases, i)
    return [
        CoverEntryOut(
            cluster_id=e.cluster_id,
            other_release=e.other_release,
            other_cluster_id=e.other_cluster_id,
            size=e.size,
            ranges=dict(e.ranges),
        )
        for e in entries
    ]


async def statistics(
    session: AsyncSession, series: Series, secret: bytes, individual: str
) -> StatisticsOut:
    if series.method != "wong":
        raise NotFound(
            f"series {series.name!r} uses {series.method}, which keeps no statistics file",
            {"series": series.name},
            code=ErrorCode.NO_STATISTICS_FILE,
        )
    from app.core.variants.wong import breach_probability

    found = await statistics_of(session, series.id, individual_key(secret, individual))
    level = effective_params(series).l
    return StatisticsOut(
        individual=individual,
        l=level,
        threshold=1 / level,
        terms={
            term: TermStatistics(
                entries=[StatisticsEntry(release_no=no, n=n, n_s=ns) for no, n, ns in entries],
                breach_probability=breach_probability([(n, ns) for _, n, ns in entries]),
            )
            for term, entries in found.items()
        },
    )

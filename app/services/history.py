"""Loading what the core needs of a series' past: releases, ledgers, statistics file,
signatures."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from app.core.history import SeriesHistory
from app.core.model import PublishedRelease
from app.db.models import Release, Series
from app.db.repositories.release_load import load_ledgers, load_releases
from app.db.repositories.releases import ReleaseRepository
from app.db.repositories.signatures import load_signatures
from app.db.repositories.statistics import load_statistics

__all__ = ["load_history", "load_public_releases"]


async def load_public_releases(
    session: AsyncSession, series: Series
) -> tuple[list[Release], list[PublishedRelease]]:
    """Release rows and their public content, oldest first."""
    models = list(await ReleaseRepository(session).list(series.id))
    return models, await load_releases(session, models)


async def load_history(session: AsyncSession, series: Series) -> SeriesHistory:
    """Everything the core reads of the series' past, oldest release first."""
    models, releases = await load_public_releases(session, series)
    ledgers = await load_ledgers(session, models)
    statistics = await load_statistics(session, series.id) if series.method == "wong" else {}
    signatures = await load_signatures(session, series.id) if series.method == "inv" else {}
    return SeriesHistory(releases=list(releases), ledgers=ledgers, statistics=statistics,
                         signatures=signatures)

"""The public view of releases: lists, summaries and loading (design.md §3).

Their JSON and NDJSON are stored bytes: :mod:`app.services.renderings`.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from app.core.model import PublishedRelease
from app.db.models import Release, Series
from app.db.repositories.release_load import load_releases
from app.db.repositories.releases import ReleaseRepository
from app.errors import NotFound
from app.io.public import public_counterfeit_rows
from app.schemas.jobs import ReleaseSummary
from app.schemas.releases import ReleaseListItem, Withdrawal
from app.services.history import attach_layouts

__all__ = ["get_release", "get_release_model", "list_releases", "summary", "withdrawn"]


async def list_releases(session: AsyncSession, series: Series) -> list[ReleaseListItem]:
    return [
        ReleaseListItem(
            release_no=r.release_no,
            label=r.label,
            method=r.method,
            n_rows=r.n_rows,
            n_clusters=r.n_clusters,
            created_at=r.created_at,
            withdrawn=withdrawn(r),
        )
        for r in await ReleaseRepository(session).list(series.id)
    ]


def withdrawn(model: Release) -> Withdrawal | None:
    """When and why the release was withdrawn; ``None`` while it is served to everyone."""
    if model.withdrawn_at is None:
        return None
    return Withdrawal(at=model.withdrawn_at, reason=model.withdrawal_reason or "")


async def get_release_model(session: AsyncSession, series: Series, release_no: int) -> Release:
    """The release's row; 404 when the series has no such release."""
    model = await ReleaseRepository(session).get(series.id, release_no)
    if model is None:
        raise NotFound(
            f"series {series.name!r} has no release {release_no}",
            {"series": series.name, "release_no": release_no},
        )
    return model


async def get_release(
    session: AsyncSession, series: Series, release_no: int
) -> tuple[Release, PublishedRelease]:
    model = await get_release_model(session, series, release_no)
    (release,) = await load_releases(session, [model])
    await attach_layouts(session, series.method, [model], [release])
    return model, release


def summary_of_model(model: Release) -> ReleaseSummary | None:
    """:func:`summary` from the release's row alone, without loading its rows; ``None`` for
    a release stored before its total of counterfeit rows was kept (then :func:`summary`)."""
    if model.counterfeit_rows is None:
        return None
    return ReleaseSummary(
        release_no=model.release_no,
        label=model.label,
        method=model.method,
        n_rows=model.n_rows,
        n_clusters=model.n_clusters,
        counterfeits=model.counterfeit_rows + model.global_counterfeits,
    )


def summary(release: PublishedRelease, method: str) -> ReleaseSummary:
    return ReleaseSummary(
        release_no=release.release_no,
        label=release.label,
        method=method,
        n_rows=release.n_rows,
        n_clusters=release.n_clusters,
        counterfeits=public_counterfeit_rows(release) + release.global_counterfeits,
    )

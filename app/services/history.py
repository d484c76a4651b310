"""Loading what the core needs of a series' past: releases, ledgers and the private state
its method keeps (:mod:`app.methods`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from app.core.history import SeriesHistory
from app.core.methods import Method
from app.core.model import PublishedRelease
from app.db.models import Release, Series
from app.db.repositories.release_load import load_ledgers, load_releases
from app.db.repositories.release_packs import load_packs
from app.db.repositories.releases import ReleaseRepository
from app.methods.registry import get_method
from app.methods.storage import storage_of

__all__ = [
    "PackedHistory",
    "attach_layouts",
    "load_history",
    "load_keyed_history",
    "load_packed_history",
    "load_public_releases",
]


async def attach_layouts(
    session: AsyncSession,
    method: str | Method,
    models: Sequence[Release],
    releases: Sequence[PublishedRelease],
) -> None:
    """Give the releases of a method with its own public layout that layout (loaded).
    ``method``: its name, or its registry entry when the caller holds it (a job)."""
    storage = storage_of(get_method(method) if isinstance(method, str) else method)
    missing = [(m, r) for m, r in zip(models, releases, strict=True) if r.layout is None]
    if not missing:
        return
    layouts = await storage.load_layouts(session, [m.id for m, _ in missing])
    for model, release in missing:
        release.layout = layouts.get(model.id)


async def load_public_releases(
    session: AsyncSession, series: Series, method: Method | None = None
) -> tuple[list[Release], list[PublishedRelease]]:
    """Release rows and their public content, oldest first."""
    models = list(await ReleaseRepository(session).list(series.id))
    releases = await load_releases(session, models)
    await attach_layouts(session, method or series.method, models, releases)
    return models, releases


async def load_history(session: AsyncSession, series: Series) -> SeriesHistory:
    """Everything the core reads of the series' past, oldest release first."""
    return (await load_keyed_history(session, series))[0]


async def load_keyed_history(
    session: AsyncSession, series: Series, method: Method | None = None
) -> tuple[SeriesHistory, list[int]]:
    """:func:`load_history` and the releases' primary keys (the worker's cache keys);
    ``method``: the series' registry entry, when the caller holds it (a job's context)."""
    method = method or get_method(series.method)
    models, releases = await load_public_releases(session, series, method)
    ledgers = await load_ledgers(session, models)
    state = await storage_of(method).load_state(session, series.id)
    return SeriesHistory(releases=list(releases), ledgers=ledgers, **state), [m.id for m in models]


@dataclass(frozen=True, slots=True)
class PackedHistory:
    """A series' past as its jobs' compute children packed each release, oldest first, and
    the private state its method keeps (a :class:`SeriesHistory` without its releases)."""

    releases: list[bytes]
    state: SeriesHistory
    release_ids: list[int]


async def load_packed_history(
    session: AsyncSession,
    series: Series,
    method: Method,
    cached: Callable[[int], bytes | None] = lambda _: None,
) -> PackedHistory | None:
    """The series' past without reading a release into objects: each release's pack, from
    ``cached`` (the worker's cache) or the database; ``None`` when a release has none (stored
    before packs were kept: :func:`load_keyed_history` reads it)."""
    models = await ReleaseRepository(session).list(series.id)
    ids = [m.id for m in models]
    blobs = {i: blob for i in ids if (blob := cached(i)) is not None}
    blobs.update(await load_packs(session, [i for i in ids if i not in blobs]))
    if len(blobs) < len(ids):
        return None
    state = await storage_of(method).load_state(session, series.id)
    return PackedHistory([blobs[i] for i in ids], SeriesHistory(**state), ids)

"""The public view of releases: lists, JSON and NDJSON renderings (SPEC section 3).

Only :class:`~app.core.model.PublishedRelease` is rendered here, which has no field that
could leak a counterfeit flag, FP2 count or individual. Renderings are cached per release:
a release never changes once stored.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.core.model import PublishedRelease
from app.db.models import Release, Series
from app.db.repositories.release_load import load_releases
from app.db.repositories.releases import ReleaseRepository
from app.errors import NotFound
from app.io.public import cluster_document, release_header
from app.schemas.releases import ReleaseListItem, ReleaseSummary

__all__ = ["get_release", "list_releases", "render_json", "render_ndjson", "summary",
           "clear_render_cache"]


async def list_releases(session: AsyncSession, series: Series) -> list[ReleaseListItem]:
    return [
        ReleaseListItem(release_no=r.release_no, label=r.label, method=r.method,
                        n_rows=r.n_rows, n_clusters=r.n_clusters, created_at=r.created_at)
        for r in await ReleaseRepository(session).list(series.id)
    ]


async def get_release(
    session: AsyncSession, series: Series, release_no: int
) -> tuple[Release, PublishedRelease]:
    model = await ReleaseRepository(session).get(series.id, release_no)
    if model is None:
        raise NotFound(f"series {series.name!r} has no release {release_no}",
                       {"series": series.name, "release_no": release_no})
    (release,) = await load_releases(session, [model])
    return model, release


def summary(release: PublishedRelease, method: str) -> ReleaseSummary:
    return ReleaseSummary(
        release_no=release.release_no,
        label=release.label,
        method=method,
        n_rows=release.n_rows,
        n_clusters=len(release.clusters),
        counterfeits=sum(c.counterfeits for c in release.clusters) + release.global_counterfeits,
    )


def _header(series: Series, model: Release, release: PublishedRelease) -> dict[str, Any]:
    return release_header(
        release, series.name, model.method, model.params,
        release_no=model.release_no, label=model.label,
    )


class _RenderCache:
    def __init__(self, max_bytes: int = 256 * 1024 * 1024) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[tuple[int, str], bytes] = OrderedDict()
        self._size = 0

    def get(self, key: tuple[int, str]) -> bytes | None:
        item = self._items.get(key)
        if item is not None:
            self._items.move_to_end(key)
        return item

    def clear(self) -> None:
        self._items.clear()
        self._size = 0

    def put(self, key: tuple[int, str], value: bytes) -> None:
        if key in self._items or len(value) > self.max_bytes:
            return
        self._items[key] = value
        self._size += len(value)
        while self._size > self.max_bytes:
            _, old = self._items.popitem(last=False)
            self._size -= len(old)


_RENDERED = _RenderCache()


def clear_render_cache() -> None:
    _RENDERED.clear()
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def render_json(series: Series, model: Release, release: PublishedRelease) -> bytes:
    """The release as one JSON document (API.md)."""
    key = (model.id, "json")
    cached = _RENDERED.get(key)
    if cached is None:
        body = _header(series, model, release)
        body["clusters"] = [cluster_document(c) for c in release.clusters]
        cached = _dumps(body).encode()
        _RENDERED.put(key, cached)
    return cached


def render_ndjson(series: Series, model: Release, release: PublishedRelease) -> Iterator[bytes]:
    """The release as NDJSON: the header line, then one cluster a line."""
    yield _dumps(_header(series, model, release)).encode() + b"\n"
    batch: list[bytes] = []
    for cluster in release.clusters:
        batch.append(_dumps(cluster_document(cluster)).encode() + b"\n")
        if len(batch) >= 256:
            yield b"".join(batch)
            batch = []
    if batch:
        yield b"".join(batch)

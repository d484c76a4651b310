"""Releases and risk summaries served as stored bytes: rendered once, kept in PostgreSQL.

A release is rendered (JSON and NDJSON, gzip) when it is stored, inside the publication
transaction, so a release never exists without its renderings; releases stored before
renderings existed are rendered on their first read. A risk summary changes when later
releases are published, so it is rendered on first read and keyed by the number of releases
of the series at that moment (and the threshold): a new release makes a new key.

Each process holds recently served documents (gzip and identity bytes) in memory, up to
``SERIALPUB_RENDER_CACHE_BYTES``; larger documents are streamed from their chunks.
"""

from __future__ import annotations

import asyncio
import zlib
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import partial

from sqlalchemy.ext.asyncio import AsyncSession

from app.core.model import PublishedRelease
from app.core.risk.assess import ReleaseRisk
from app.db.engine import Database
from app.db.models import Release, Series
from app.db.repositories.reads import chunks, release_document_meta
from app.db.repositories.releases import ReleaseRepository
from app.db.repositories.renderings import (
    DocumentMeta,
    find_document,
    find_release_document,
    insert_document,
    releases_without,
)
from app.errors import NotFound
from app.io.public import layout_parts, release_header
from app.io.rendering import (
    CHUNK_BYTES,
    Rendered,
    gunzip,
    render_document,
    render_layout,
    render_release,
)
from app.services import releases, risk
from app.services.series import get_series

__all__ = [
    "Document",
    "RELEASE_KEYS",
    "configure_memory",
    "clear_render_cache",
    "render_release_documents",
    "store_release_documents",
    "release_document",
    "held_release_document",
    "risk_document",
    "stream_document",
    "render_missing",
]

RELEASE_KEYS = {"json": "release.json", "ndjson": "release.ndjson"}
#: Above this many bytes, gunzip in a worker thread rather than on the event loop.
_THREAD_BYTES = 1 << 16


@dataclass(frozen=True, slots=True)
class Document:
    """A stored document; its bytes when this process holds them (else stream the chunks)."""

    meta: DocumentMeta
    gzip: bytes | None = None
    identity: bytes | None = None


class _Memory:
    """Per-process LRU of document bytes (bounded by their size) and of the metadata of
    release documents (immutable: a series id and release number always name the same)."""

    def __init__(self, max_bytes: int = 256 << 20, max_metas: int = 100_000) -> None:
        self.max_bytes = max_bytes
        self.max_metas = max_metas
        self._bytes: OrderedDict[int, tuple[bytes, bytes]] = OrderedDict()
        self._size = 0
        self._metas: OrderedDict[tuple[int, int, str], DocumentMeta] = OrderedDict()

    def holds(self, meta: DocumentMeta) -> bool:
        """Small enough to keep: a few large documents must not evict every small one."""
        return meta.gzip_size + meta.identity_size <= self.max_bytes // 8

    def get(self, document_id: int) -> tuple[bytes, bytes] | None:
        found = self._bytes.get(document_id)
        if found is not None:
            self._bytes.move_to_end(document_id)
        return found

    def put(self, document_id: int, gzip: bytes, identity: bytes) -> None:
        if document_id in self._bytes:
            return
        self._bytes[document_id] = (gzip, identity)
        self._size += len(gzip) + len(identity)
        while self._size > self.max_bytes and self._bytes:
            _, (old_gzip, old_identity) = self._bytes.popitem(last=False)
            self._size -= len(old_gzip) + len(old_identity)

    def meta(self, key: tuple[int, int, str]) -> DocumentMeta | None:
        return self._metas.get(key)

    def remember(self, key: tuple[int, int, str], meta: DocumentMeta) -> None:
        self._metas[key] = meta
        while len(self._metas) > self.max_metas:
            self._metas.popitem(last=False)

    def clear(self) -> None:
        self._bytes.clear()
        self._metas.clear()
        self._size = 0


_MEMORY = _Memory()
_LOCKS: dict[tuple[int, int], asyncio.Lock] = {}
_LOADING: dict[int, asyncio.Task[tuple[bytes, bytes]]] = {}


def configure_memory(max_bytes: int) -> None:
    _MEMORY.max_bytes = max_bytes
    _MEMORY.clear()


def clear_render_cache() -> None:
    _MEMORY.clear()


def render_release_documents(
    series_name: str,
    method: str,
    params: Mapping[str, object],
    release: PublishedRelease,
    *,
    release_no: int,
    label: str | None,
) -> tuple[Rendered, Rendered]:
    """The JSON and the NDJSON of ``release`` as :func:`store_release_documents` stores them,
    without a database: a publication renders them in a thread while its rows go into
    PostgreSQL (the number, label, method and params its release row will hold)."""
    if release.layout is not None:
        header, clusters = layout_parts(
            release, series_name, method, params, release_no=release_no, label=label
        )
        return render_layout(header, clusters)
    header = release_header(
        release, series_name, method, params, release_no=release_no, label=label
    )
    return render_release(header, release.clusters)


async def store_release_documents(
    session: AsyncSession,
    series_name: str,
    model: Release,
    release: PublishedRelease,
    rendered: Awaitable[tuple[Rendered, Rendered]] | None = None,
) -> list[DocumentMeta]:
    """Render the public release (JSON, NDJSON) and store it in the caller's transaction;
    ``rendered``: :func:`render_release_documents` of the same release, started earlier."""
    if rendered is None:
        rendered = asyncio.to_thread(
            partial(
                render_release_documents,
                series_name,
                model.method,
                model.params,
                release,
                release_no=model.release_no,
                label=model.label,
            )
        )
    stored = []
    for key, document in zip(RELEASE_KEYS.values(), await rendered, strict=True):
        meta = await insert_document(session, model.id, key, document, CHUNK_BYTES)
        stored.append(meta or await _stored(session, model.id, key))
    return stored


async def _stored(session: AsyncSession, release_id: int, key: str) -> DocumentMeta:
    meta = await find_document(session, release_id, key)
    assert meta is not None, "a conflicting insert committed this document"
    return meta


async def release_document(
    db: Database, series_id: int, series_name: str, release_no: int, fmt: str
) -> Document:
    """The stored rendering of a release (rendered now if it predates renderings); 404.

    The hot path: metadata and bytes from this process' memory, else one statement each on
    an autocommit connection; a session only for a release never read before.
    """
    key = RELEASE_KEYS[fmt]
    cache_key = (series_id, release_no, key)
    meta = _MEMORY.meta(cache_key)
    if meta is None:
        meta = await db.read(lambda conn: release_document_meta(conn, series_id, release_no, key))
    if meta is None:
        async with db.session() as session:
            series = await get_series(session, series_name)
            await releases.get_release_model(session, series, release_no)  # 404 first
        meta = await _render_missing(db, series, release_no, key)
    _MEMORY.remember(cache_key, meta)
    return await _with_bytes(db, meta)


def held_release_document(series_id: int, release_no: int, fmt: str) -> Document | None:
    """:func:`release_document` when this process holds the document's bytes, without
    waiting; ``None`` otherwise (the caller then awaits :func:`release_document`)."""
    meta = _MEMORY.meta((series_id, release_no, RELEASE_KEYS[fmt]))
    if meta is None:
        return None
    held = _MEMORY.get(meta.id)
    return None if held is None else Document(meta, *held)


async def _render_missing(db: Database, series: Series, release_no: int, key: str) -> DocumentMeta:
    """Render a release stored before renderings existed, committed at once (a cache fill,
    in a transaction of its own) so that concurrent first readers find it."""
    # One rendering per release and process at a time: fifty first readers of a large
    # release would otherwise each load and render it.
    async with _LOCKS.setdefault((series.id, release_no), asyncio.Lock()):
        async with db.session() as session:
            meta = await find_release_document(session, series.id, release_no, key)
            if meta is not None:
                return meta
            model, release = await releases.get_release(session, series, release_no)
            metas = await store_release_documents(session, series.name, model, release)
    return metas[list(RELEASE_KEYS.values()).index(key)]


async def render_missing(db: Database, echo: Callable[[str], object] = print) -> int:
    """Render every release stored before renderings existed (``serialpub render``), each in
    a transaction of its own; returns how many. Reads would otherwise render each on first
    request, and the first reader of a large release would wait for it."""
    async with db.session() as session:
        missing = await releases_without(session, RELEASE_KEYS["json"])
    for series_id, release_no in missing:
        async with db.session() as session:
            series = await session.get(Series, series_id)
            assert series is not None, "releases reference their series"
            model, release = await releases.get_release(session, series, release_no)
            await store_release_documents(session, series.name, model, release)
        echo(f"rendered {series.name} release {release_no} ({model.n_rows:,} rows)")
    return len(missing)


async def _with_bytes(db: Database, meta: DocumentMeta) -> Document:
    held = _MEMORY.get(meta.id)
    if held is not None:
        return Document(meta, *held)
    if not _MEMORY.holds(meta):
        return Document(meta)
    # Concurrent first readers of one document share one read and one inflation (after a
    # restart, fifty of them would otherwise each hold a copy).
    task = _LOADING.get(meta.id)
    if task is None:
        task = asyncio.get_running_loop().create_task(_load(db, meta))
        _LOADING[meta.id] = task
        task.add_done_callback(lambda _: _LOADING.pop(meta.id, None))
        # Its waiters get any error; this only keeps asyncio from reporting it as lost when
        # every waiter was cancelled (clients gone).
        task.add_done_callback(lambda t: t.cancelled() or t.exception())
    gzip, identity = await asyncio.shield(task)
    return Document(meta, gzip, identity)


async def _load(db: Database, meta: DocumentMeta) -> tuple[bytes, bytes]:
    parts = await db.read(lambda conn: chunks(conn, meta.id, 0, meta.n_chunks - 1))
    if len(parts) != meta.n_chunks:
        raise _gone(meta)
    gzip = b"".join(parts)
    identity = await asyncio.to_thread(gunzip, gzip) if len(gzip) > _THREAD_BYTES else gunzip(gzip)
    _MEMORY.put(meta.id, gzip, identity)
    return gzip, identity


def risk_key(n_releases: int, r_th: float, sees_private: bool) -> str:
    return f"risk/{n_releases}/{float(r_th)!r}/{'private' if sees_private else 'public'}"


async def risk_document(
    session: AsyncSession,
    db: Database,
    series: Series,
    release_no: int,
    r_th: float | None,
    sees_private: bool,
) -> Document:
    """The risk summary of a release as of now, computed once per number of releases."""
    repo = ReleaseRepository(session)
    model = await repo.get(series.id, release_no)
    if model is None:
        raise NotFound(
            f"series {series.name!r} has no release {release_no}",
            {"series": series.name, "release_no": release_no},
        )
    threshold = r_th or risk.default_r_th(series)
    key = risk_key(await repo.count(series.id), threshold, sees_private)
    meta = await find_document(session, model.id, key)
    if meta is None:
        n_releases, summary = await risk.release_risk_as_of(
            session, series, release_no, threshold, sees_private
        )
        # The count is taken again from the releases the risk was computed on: one
        # published in between must not be filed under the older count.
        key = risk_key(n_releases, threshold, sees_private)
        rendered = render_document(summary.model_dump(mode="json"))
        meta = await insert_document(session, model.id, key, rendered, CHUNK_BYTES)
        if meta is not None:
            # Not committed yet (the request's transaction): served from what was rendered.
            gzip = rendered.gzip
            identity = gunzip(gzip)
            _MEMORY.put(meta.id, gzip, identity)
            return Document(meta, gzip, identity)
        meta = await _stored(session, model.id, key)
    return await _with_bytes(db, meta)


async def risk_summary_bytes(
    session: AsyncSession,
    db: Database,
    series: Series,
    release_no: int,
    r_th: float | None,
    sees_private: bool,
) -> bytes:
    """The JSON of :func:`risk_document` (filed by the publication for its default
    threshold, else computed and filed now)."""
    document = await risk_document(session, db, series, release_no, r_th, sees_private)
    if document.identity is not None:
        return document.identity
    meta = document.meta
    parts = [part async for part in stream_document(db, meta, False, 0, meta.identity_size - 1)]
    return b"".join(parts)


async def store_risk_documents(
    session: AsyncSession,
    series: Series,
    model: Release,
    release: PublishedRelease,
    computed: ReleaseRisk,
) -> None:
    """File the new release's risk summary, computed beside it by the publication (its
    ``r_th`` is the series' default), for both audiences, in the publication's transaction:
    the ``wait=true`` answer and the release's first ``GET .../risk`` read it instead of
    loading the whole series into the API (:func:`risk_document` computes it only for a
    threshold, or a count of releases, that nothing filed)."""
    n_releases = await ReleaseRepository(session).count(series.id)
    for sees_private in (False, True):
        summary = await risk.summary_for(session, series, model, release, computed, sees_private)
        key = risk_key(n_releases, computed.r_th, sees_private)
        rendered = render_document(summary.model_dump(mode="json"))
        await insert_document(session, model.id, key, rendered, CHUNK_BYTES)


async def _chunk(db: Database, meta: DocumentMeta, seq: int) -> bytes:
    # A connection per chunk: a slow client must not hold a pooled connection for the
    # whole transfer.
    found = await db.read(lambda conn: chunks(conn, meta.id, seq, seq))
    if len(found) != 1:
        raise _gone(meta)
    return found[0]


def _gone(meta: DocumentMeta) -> NotFound:
    # Only if its release was deleted after this process remembered the document.
    return NotFound("the document's stored bytes are gone", {"document": meta.id})


async def stream_document(
    db: Database, meta: DocumentMeta, gzip: bool, start: int, end: int
) -> AsyncIterator[bytes]:
    """Bytes ``start..end`` (inclusive) of the gzip or identity representation, read chunk
    by chunk; the identity bytes are inflated as they go (a range skips what precedes it)."""
    size = meta.chunk_bytes
    if gzip:
        for seq in range(start // size, end // size + 1):
            data, base = await _chunk(db, meta, seq), seq * size
            yield data[max(start - base, 0) : end + 1 - base]
        return
    inflater = zlib.decompressobj(31)
    position = 0
    for seq in range(meta.n_chunks):
        if position > end:
            break
        data = await asyncio.to_thread(inflater.decompress, await _chunk(db, meta, seq))
        base, position = position, position + len(data)
        if position > start:
            yield data[max(start - base, 0) : end + 1 - base]

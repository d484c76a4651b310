"""Rendered documents (:mod:`app.db.models.rendering`): metadata and gzip chunks."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Release, RenderedChunk, RenderedDocument
from app.db.raw import driver_connection
from app.io.rendering import Rendered

__all__ = [
    "DocumentMeta",
    "find_document",
    "find_release_document",
    "insert_document",
    "read_chunks",
    "releases_without",
]


@dataclass(frozen=True, slots=True)
class DocumentMeta:
    """What is needed to answer a request for a document before reading any of its bytes."""

    id: int
    media_type: str
    etag: str
    identity_size: int
    gzip_size: int
    chunk_bytes: int
    n_chunks: int


def _meta(row: RenderedDocument) -> DocumentMeta:
    return DocumentMeta(
        row.id,
        row.media_type,
        row.etag,
        row.identity_size,
        row.gzip_size,
        row.chunk_bytes,
        row.n_chunks,
    )


async def find_document(session: AsyncSession, release_id: int, key: str) -> DocumentMeta | None:
    row = await session.scalar(
        select(RenderedDocument).where(
            RenderedDocument.release_id == release_id, RenderedDocument.key == key
        )
    )
    return _meta(row) if row is not None else None


async def find_release_document(
    session: AsyncSession, series_id: int, release_no: int, key: str
) -> DocumentMeta | None:
    row = await session.scalar(
        select(RenderedDocument)
        .join(Release, Release.id == RenderedDocument.release_id)
        .where(
            Release.series_id == series_id,
            Release.release_no == release_no,
            RenderedDocument.key == key,
        )
    )
    return _meta(row) if row is not None else None


async def insert_document(
    session: AsyncSession, release_id: int, key: str, rendered: Rendered, chunk_bytes: int
) -> DocumentMeta | None:
    """Store ``rendered``; ``None`` when another transaction stored this key first (both
    renderings are of the same immutable content, so the first one stays)."""
    statement = (
        insert(RenderedDocument)
        .values(
            release_id=release_id,
            key=key,
            media_type=rendered.media_type,
            etag=rendered.etag,
            identity_size=rendered.identity_size,
            gzip_size=rendered.gzip_size,
            chunk_bytes=chunk_bytes,
            n_chunks=len(rendered.chunks),
        )
        .on_conflict_do_nothing(index_elements=["release_id", "key"])
        .returning(RenderedDocument.id)
    )
    document_id = await session.scalar(statement)
    if document_id is None:
        return None
    conn = await driver_connection(session)
    async with conn.cursor() as cur:
        await cur.executemany(
            "INSERT INTO rendered_chunks (document_id, seq, data) VALUES (%s, %s, %s)",
            [(document_id, seq, chunk) for seq, chunk in enumerate(rendered.chunks)],
        )
    return DocumentMeta(
        document_id,
        rendered.media_type,
        rendered.etag,
        rendered.identity_size,
        rendered.gzip_size,
        chunk_bytes,
        len(rendered.chunks),
    )


async def read_chunks(
    session: AsyncSession, document_id: int, first: int, last: int
) -> list[bytes]:
    """Chunks ``first..last`` (inclusive) of a document's gzip stream, in order."""
    rows = await session.execute(
        select(RenderedChunk.data)
        .where(
            RenderedChunk.document_id == document_id,
            RenderedChunk.seq >= first,
            RenderedChunk.seq <= last,
        )
        .order_by(RenderedChunk.seq)
    )
    return [bytes(data) for (data,) in rows]


async def releases_without(session: AsyncSession, key: str) -> list[tuple[int, int]]:
    """``(series_id, release_no)`` of every release with no document ``key``, oldest first."""
    missing = (
        select(Release.series_id, Release.release_no)
        .outerjoin(
            RenderedDocument,
            (RenderedDocument.release_id == Release.id) & (RenderedDocument.key == key),
        )
        .where(RenderedDocument.id.is_(None))
        .order_by(Release.id)
    )
    return [(series_id, release_no) for series_id, release_no in await session.execute(missing)]

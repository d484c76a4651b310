"""The hot read path in plain SQL on an autocommit connection: one statement per step.

A stored release is served after two lookups (the caller's key with the series, then the
document, which each process remembers), so the ORM's per-statement cost and a transaction's
BEGIN/COMMIT round trips would be most of the work.
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import Any

import psycopg

from app.db.repositories.renderings import DocumentMeta

__all__ = [
    "KeyAndSeries",
    "key_and_series",
    "release_document_meta",
    "chunks",
    "withdrawn_releases",
    "withdrawal_of",
]

Connection = psycopg.AsyncConnection[Any]


@dataclass(frozen=True, slots=True)
class KeyAndSeries:
    key_id: uuid.UUID
    role: str
    key_series: str | None
    #: ``None`` when no series has that name.
    series_id: int | None
    #: When the key stops working (``None``: never).
    expires_at: dt.datetime | None


async def key_and_series(conn: Connection, key_hash: str, series_name: str) -> KeyAndSeries | None:
    """The unrevoked key with this hash and the id of the named series; ``None``: no key."""
    cur = await conn.execute(
        "SELECT k.id, k.role, k.series_name, s.id, k.expires_at FROM api_keys k "
        "LEFT JOIN series s ON s.name = %s WHERE k.key_hash = %s AND k.revoked_at IS NULL",
        (series_name, key_hash),
    )
    row = await cur.fetchone()
    return KeyAndSeries(*row) if row is not None else None


async def withdrawn_releases(conn: Connection, series_id: int) -> list[int]:
    """The numbers of the series' withdrawn releases (usually none)."""
    cur = await conn.execute(
        "SELECT release_no FROM releases WHERE series_id = %s AND withdrawn_at IS NOT NULL",
        (series_id,),
    )
    return [no for (no,) in await cur.fetchall()]


async def withdrawal_of(
    conn: Connection, series_id: int, release_no: int
) -> tuple[dt.datetime, str] | None:
    """When and why the release was withdrawn; ``None`` when it was not (or is unknown)."""
    cur = await conn.execute(
        "SELECT withdrawn_at, withdrawal_reason FROM releases "
        "WHERE series_id = %s AND release_no = %s AND withdrawn_at IS NOT NULL",
        (series_id, release_no),
    )
    row = await cur.fetchone()
    return None if row is None else (row[0], row[1] or "")


async def release_document_meta(
    conn: Connection, series_id: int, release_no: int, key: str
) -> DocumentMeta | None:
    cur = await conn.execute(
        "SELECT d.id, d.media_type, d.etag, d.identity_size, d.gzip_size, d.chunk_bytes, "
        "d.n_chunks FROM rendered_documents d JOIN releases r ON r.id = d.release_id "
        "WHERE r.series_id = %s AND r.release_no = %s AND d.key = %s",
        (series_id, release_no, key),
    )
    row = await cur.fetchone()
    return DocumentMeta(*row) if row is not None else None


async def chunks(conn: Connection, document_id: int, first: int, last: int) -> list[bytes]:
    """Chunks ``first..last`` (inclusive) of a document's gzip stream, in order."""
    cur = await conn.execute(
        "SELECT data FROM rendered_chunks WHERE document_id = %s AND seq BETWEEN %s AND %s "
        "ORDER BY seq",
        (document_id, first, last),
    )
    return [bytes(data) for (data,) in await cur.fetchall()]

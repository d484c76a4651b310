"""A series' public files as readers download them: the stored renderings of
``GET /v1/series/{name}/releases/{no}`` (:mod:`app.services.renderings`), read whole or by
their first line.

The web view and its verdicts read these bytes, not the database's rows, so that what they
show is what an analyst or ``serialpub verify`` reads from the API, byte for byte.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator
from typing import Any, cast

import orjson

from app.db.engine import Database
from app.db.models import Series
from app.services.renderings import Document, release_document, stream_document

__all__ = [
    "document_bytes",
    "release_clusters",
    "release_documents",
    "release_header",
    "release_json",
]


async def document_bytes(db: Database, document: Document) -> bytes:
    """The identity bytes of a stored document (held in memory, else read chunk by chunk)."""
    if document.identity is not None:
        return document.identity
    meta = document.meta
    return b"".join([p async for p in stream_document(db, meta, False, 0, meta.identity_size - 1)])


async def release_json(db: Database, series: Series, release_no: int) -> dict[str, Any]:
    """The public release as ``GET …/releases/{no}`` answers it, parsed."""
    document = await release_document(db, series.id, series.name, release_no, "json")
    parsed: dict[str, Any] = orjson.loads(await document_bytes(db, document))
    return parsed


async def release_documents(db: Database, series: Series, n_releases: int) -> list[Document]:
    """The JSON renderings of releases 1..n (metadata, and bytes when memory holds them)."""
    return [
        await release_document(db, series.id, series.name, no, "json")
        for no in range(1, n_releases + 1)
    ]


async def release_header(db: Database, series: Series, release_no: int) -> dict[str, Any]:
    """The public release without its clusters: the first line of its NDJSON rendering, so
    that a large release is not read whole for its figures."""
    document = await release_document(db, series.id, series.name, release_no, "ndjson")
    if document.identity is not None:
        first = document.identity.split(b"\n", 1)[0]
    else:
        meta, parts = document.meta, []
        stream = cast(
            AsyncGenerator[bytes, None],
            stream_document(db, meta, False, 0, meta.identity_size - 1),
        )
        async with contextlib.aclosing(stream):
            async for part in stream:
                parts.append(part)
                if b"\n" in part:
                    break
        first = b"".join(parts).split(b"\n", 1)[0]
    header: dict[str, Any] = orjson.loads(first)
    return header


async def _lines(db: Database, document: Document) -> AsyncGenerator[bytes, None]:
    """The lines of an NDJSON document, read chunk by chunk when memory does not hold it."""
    if document.identity is not None:
        for line in document.identity.splitlines():
            yield line
        return
    meta, rest = document.meta, b""
    stream = cast(
        AsyncGenerator[bytes, None], stream_document(db, meta, False, 0, meta.identity_size - 1)
    )
    async with contextlib.aclosing(stream):
        async for part in stream:
            *complete, rest = (rest + part).split(b"\n")
            for line in complete:
                yield line
    if rest:
        yield rest


async def release_clusters(
    db: Database, series: Series, release_no: int, first: int, count: int
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The public header and clusters ``first .. first + count - 1`` of a release, parsed
    from its NDJSON rendering line by line: a page of a large release is read only up to
    its last cluster, and only those clusters are parsed."""
    document = await release_document(db, series.id, series.name, release_no, "ndjson")
    header: dict[str, Any] = {}
    clusters: list[dict[str, Any]] = []
    lines = _lines(db, document)
    position = 0
    async with contextlib.aclosing(lines):
        async for line in lines:
            if position == 0:
                header = orjson.loads(line)
            elif position > first + count:
                break
            elif position > first:
                clusters.append(orjson.loads(line))
            position += 1
    return header, clusters

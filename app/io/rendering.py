"""Public documents rendered once into bytes: a release as JSON and NDJSON, any small document.

A published release never changes, so serving it is sending bytes: each document is rendered
once (orjson), compressed once into one gzip stream, and cut into chunks of ``CHUNK_BYTES`` so
that a byte range or a stream maps to chunk numbers. The strong validator (ETag) is the sha256
of the identity bytes.

Nested mappings are written with sorted keys: a release rendered from the publication's
objects and the same release loaded back from PostgreSQL (JSONB reorders keys) give the same
bytes, hence the same ETag.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import orjson

from app.core.model import PublishedCluster
from app.io.public import cluster_document

__all__ = [
    "CHUNK_BYTES",
    "JSON",
    "NDJSON",
    "Rendered",
    "render_document",
    "render_layout",
    "render_release",
    "gunzip",
]

CHUNK_BYTES = 1 << 20
JSON = "application/json"
NDJSON = "application/x-ndjson"
#: zlib's default: level 9 compresses a release about 3% smaller for about 3x the time.
GZIP_LEVEL = 6
#: Bytes collected before each call into zlib (one call per cluster costs more than it does).
_BATCH_BYTES = 1 << 18
#: A rendered document is handed to its writer in slices of this size.
_SLICE_BYTES = 1 << 22


@dataclass(frozen=True, slots=True)
class Rendered:
    """One document: its gzip stream in chunks and what describes its identity bytes."""

    media_type: str
    etag: str
    identity_size: int
    chunks: tuple[bytes, ...]

    @property
    def gzip_size(self) -> int:
        return sum(len(c) for c in self.chunks)

    @property
    def gzip(self) -> bytes:
        return b"".join(self.chunks)


class _Writer:
    """Hashes and gzips what it is given, cutting the compressed stream into chunks."""

    def __init__(self, media_type: str, chunk_bytes: int) -> None:
        self.media_type = media_type
        self.chunk_bytes = chunk_bytes
        # wbits 31: a gzip header and trailer (Content-Encoding: gzip), not a raw deflate.
        self._zlib = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 31)
        self._hash = hashlib.sha256()
        self._size = 0
        self._pending: list[bytes] = []
        self._pending_size = 0
        self._out = bytearray()
        self._chunks: list[bytes] = []

    def write(self, data: bytes) -> None:
        self._pending.append(data)
        self._pending_size += len(data)
        if self._pending_size >= _BATCH_BYTES:
            self._drain()

    def _drain(self) -> None:
        data = b"".join(self._pending)
        self._pending, self._pending_size = [], 0
        self._hash.update(data)
        self._size += len(data)
        self._out += self._zlib.compress(data)
        self._cut()

    def _cut(self) -> None:
        while len(self._out) >= self.chunk_bytes:
            self._chunks.append(bytes(self._out[: self.chunk_bytes]))
            del self._out[: self.chunk_bytes]

    def close(self) -> Rendered:
        self._drain()
        self._out += self._zlib.flush()
        self._cut()
        if self._out or not self._chunks:
            self._chunks.append(bytes(self._out))
        return Rendered(
            self.media_type, self._hash.hexdigest()[:32], self._size, tuple(self._chunks)
        )


def _sorted(mapping: Mapping[str, Any]) -> dict[str, Any]:
    return {k: mapping[k] for k in sorted(mapping)}


def _header_bytes(header: Mapping[str, Any]) -> bytes:
    canonical = {k: _sorted(v) if isinstance(v, Mapping) else v for k, v in header.items()}
    return orjson.dumps(canonical)


def _cluster_bytes(cluster: PublishedCluster) -> bytes:
    document = cluster_document(cluster)
    document["private_terms"] = _sorted(document["private_terms"])
    document["global_share"] = _sorted(document["global_share"])
    return orjson.dumps(document)


def render_release(
    header: Mapping[str, Any], clusters: Iterable[PublishedCluster], chunk_bytes: int = CHUNK_BYTES
) -> tuple[Rendered, Rendered]:
    """The JSON and the NDJSON of a release (docs/api.md), each cluster serialised once for both.

    ``header`` is :func:`app.io.public.release_header`: the public fields only, and
    :func:`app.io.public.cluster_document` the public cluster, so nothing private can be
    rendered here.
    """
    return _render_both(header, [_cluster_bytes(cluster) for cluster in clusters], chunk_bytes)


def render_layout(
    header: Mapping[str, Any], clusters: Iterable[Mapping[str, Any]], chunk_bytes: int = CHUNK_BYTES
) -> tuple[Rendered, Rendered]:
    """The JSON and the NDJSON of a release in a method's own layout
    (:func:`app.io.public.layout_parts`): its clusters are plain JSON documents."""
    return _render_both(header, [orjson.dumps(cluster) for cluster in clusters], chunk_bytes)


def _render_both(
    header: Mapping[str, Any], bodies: list[bytes], chunk_bytes: int
) -> tuple[Rendered, Rendered]:
    head = _header_bytes(header)
    documents = (
        (JSON, b"".join([head[:-1], b',"clusters":[', b",".join(bodies), b"]}"])),
        (NDJSON, b"\n".join([head, *bodies]) + b"\n"),
    )
    bodies.clear()
    # Hashing and gzip dominate at a million rows (zlib and hashlib release the interpreter
    # lock on large buffers): the two documents are compressed at once, one thread each.
    with ThreadPoolExecutor(2, thread_name_prefix="render") as pool:
        json_doc, ndjson_doc = pool.map(lambda d: _render(d[0], d[1], chunk_bytes), documents)
    return json_doc, ndjson_doc


def _render(media_type: str, document: bytes, chunk_bytes: int) -> Rendered:
    out = _Writer(media_type, chunk_bytes)
    for start in range(0, len(document), _SLICE_BYTES):
        out.write(document[start : start + _SLICE_BYTES])
    return out.close()


def render_document(
    document: Any, media_type: str = JSON, chunk_bytes: int = CHUNK_BYTES
) -> Rendered:
    """Any small JSON document (a risk summary) as a rendered document."""
    out = _Writer(media_type, chunk_bytes)
    out.write(orjson.dumps(document))
    return out.close()


def gunzip(data: bytes) -> bytes:
    return zlib.decompress(data, 31)

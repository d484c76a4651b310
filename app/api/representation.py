"""Answering a request for a stored document (RFC 9110): validators and 304, content coding
by ``Accept-Encoding``, one byte range, HEAD. Callers check the caller's role first: nothing
here looks at who asks, so nothing here may run before that check.
"""

from __future__ import annotations

from fastapi import Request, Response
from fastapi.responses import JSONResponse, StreamingResponse

from app.core.errors import ErrorCode
from app.db.engine import Database
from app.services.renderings import Document, stream_document

__all__ = [
    "IMMUTABLE",
    "REVALIDATE",
    "accepts_gzip",
    "etag_matches",
    "parse_range",
    "document_response",
    "DOCUMENT_RESPONSES",
]

#: A release never changes: clients keep it as long as they like. ``private`` because the
#: response depends on the caller's key: a shared cache must not hand it to anyone else.
IMMUTABLE = "private, max-age=31536000, immutable"
#: A risk summary changes when later releases are published: keep it, but ask each time
#: (a 304 when nothing changed).
REVALIDATE = "private, no-cache"

DOCUMENT_RESPONSES: dict[int | str, dict[str, object]] = {
    206: {"description": "One byte range of the representation (`Range: bytes=a-b`)"},
    304: {"description": "Not modified (`If-None-Match` names the current ETag)"},
    416: {"description": "The range lies outside the representation"},
}


def _q(params: list[str]) -> float:
    for param in params:
        name, _, value = param.strip().partition("=")
        if name.strip().lower() == "q":
            try:
                return float(value)
            except ValueError:
                return 0.0
    return 1.0


def accepts_gzip(accept_encoding: str | None) -> bool:
    """Whether ``Accept-Encoding`` allows gzip (named, or ``*``, with a non-zero q)."""
    if not accept_encoding:
        return False
    weights: dict[str, float] = {}
    for item in accept_encoding.split(","):
        name, *params = item.split(";")
        weights[name.strip().lower()] = _q(params)
    weight = weights.get("gzip", weights.get("x-gzip", weights.get("*", 0.0)))
    return weight > 0


def _opaque(tag: str) -> str:
    tag = tag.strip().removeprefix("W/").strip('"')
    return tag.removesuffix("-gzip")


def etag_matches(if_none_match: str | None, etag: str) -> bool:
    """Weak comparison (RFC 9110 13.1.2) of ``If-None-Match`` with the document's validator,
    either coding's tag: both name the same immutable content."""
    if not if_none_match:
        return False
    if if_none_match.strip() == "*":
        return True
    return any(_opaque(tag) == etag for tag in if_none_match.split(","))


def parse_range(header: str, size: int) -> tuple[int, int] | None:
    """``(start, end)`` inclusive of a single ``bytes=`` range; ``None`` to ignore the header
    (several ranges, other units or bad syntax: the whole representation is sent, which RFC
    9110 allows). Raises :class:`ValueError` when the range is unsatisfiable."""
    unit, _, spec = header.partition("=")
    if unit.strip().lower() != "bytes" or "," in spec:
        return None
    first, dash, last = spec.strip().partition("-")
    if not dash or not (first.isdigit() or last.isdigit()):
        return None
    if not first:  # suffix: the last N bytes
        if int(last) == 0 or size == 0:
            raise ValueError("empty suffix range")
        return max(size - int(last), 0), size - 1
    if last and not last.isdigit():
        return None
    start = int(first)
    if last and int(last) < start:  # invalid: ignored, as RFC 9110 14.1.1 says
        return None
    end = int(last) if last else size - 1
    if start >= size:
        raise ValueError("range starts past the end")
    return start, min(end, size - 1)


def _unsatisfiable(size: int, headers: dict[str, str]) -> Response:
    body = {
        "error": {
            "code": ErrorCode.RANGE_NOT_SATISFIABLE,
            "message": f"the range lies outside the {size} bytes of the document",
            "details": {"size": size},
        }
    }
    return JSONResponse(
        body, status_code=416, headers={**headers, "Content-Range": f"bytes */{size}"}
    )


def document_response(
    request: Request, db: Database, document: Document, cache_control: str
) -> Response:
    """200, 206, 304 or 416 for ``document``, gzip when the client accepts it."""
    meta = document.meta
    gzip = accepts_gzip(request.headers.get("accept-encoding"))
    tag = f'"{meta.etag}-gzip"' if gzip else f'"{meta.etag}"'
    headers = {
        "ETag": tag,
        "Cache-Control": cache_control,
        "Vary": "Accept-Encoding",
        "Accept-Ranges": "bytes",
    }
    if etag_matches(request.headers.get("if-none-match"), meta.etag):
        return Response(status_code=304, headers=headers)
    size = meta.gzip_size if gzip else meta.identity_size
    if gzip:
        headers["Content-Encoding"] = "gzip"
    start, end, status = 0, size - 1, 200
    requested = request.headers.get("range")
    if_range = request.headers.get("if-range")
    if requested and (if_range is None or if_range.strip() == tag):
        try:
            found = parse_range(requested, size)
        except ValueError:
            return _unsatisfiable(size, headers)
        if found is not None:
            (start, end), status = found, 206
            headers["Content-Range"] = f"bytes {start}-{end}/{size}"
    headers["Content-Length"] = str(end - start + 1)
    if request.method == "HEAD":
        return Response(status_code=status, headers=headers, media_type=meta.media_type)
    held = document.gzip if gzip else document.identity
    if held is not None:
        return Response(
            held[start : end + 1], status_code=status, headers=headers, media_type=meta.media_type
        )
    return StreamingResponse(
        stream_document(db, meta, gzip, start, end),
        status_code=status,
        headers=headers,
        media_type=meta.media_type,
    )

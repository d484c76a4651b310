"""Small JSON request bodies, read by the handler after the caller's key and role are checked.

FastAPI validates a declared body before the handler runs, so a non-admin posting a bad body
to an admin route got 422 instead of 403. Routes read their body with :func:`json_body`
instead, and document it with :func:`request_body` (the same schema, with examples).
"""

from __future__ import annotations

import json
import zlib
from typing import Any, TypeVar

from fastapi import Request
from pydantic import BaseModel, ValidationError

from app.core.errors import ErrorCode
from app.errors import BadRequest, PayloadTooLarge, Unprocessable, UnsupportedMediaType
from app.services.ingest import media_type

__all__ = ["json_body", "request_body", "MAX_SMALL_BODY"]

M = TypeVar("M", bound=BaseModel)

#: Keys and series are a few hundred bytes; a megabyte leaves room for long term lists.
MAX_SMALL_BODY = 1 << 20


def request_body(model: type[BaseModel], *, required: bool = True) -> dict[str, Any]:
    """``openapi_extra`` documenting ``model`` as the JSON body, with its examples."""
    schema = model.model_json_schema()
    examples = schema.get("examples") or []
    content: dict[str, Any] = {"schema": {"$ref": f"#/components/schemas/{model.__name__}"}}
    if examples:
        content["example"] = examples[0]
    return {"requestBody": {"required": required, "content": {"application/json": content}}}


async def _raw(request: Request) -> bytes:
    if media_type(request.headers.get("content-type") or "application/json") != "application/json":
        raise UnsupportedMediaType(
            "this operation reads application/json", {"accepted": ["application/json"]}
        )
    raw = await request.body()
    encoding = (request.headers.get("content-encoding") or "identity").strip().lower()
    if encoding in ("gzip", "x-gzip"):
        inflater = zlib.decompressobj(wbits=31)
        try:
            raw = inflater.decompress(raw, MAX_SMALL_BODY + 1)
        except zlib.error as exc:
            raise BadRequest(
                f"the gzip body cannot be decoded: {exc}", {}, code=ErrorCode.INVALID_ENCODING
            ) from None
    elif encoding not in ("", "identity"):
        raise UnsupportedMediaType(
            f"content encoding {encoding!r} is not accepted; use gzip or none",
            {"content_encoding": encoding, "accepted": ["gzip", "identity"]},
            code=ErrorCode.UNSUPPORTED_CONTENT_ENCODING,
        )
    if len(raw) > MAX_SMALL_BODY:
        raise PayloadTooLarge(
            f"the body exceeds the limit of {MAX_SMALL_BODY} bytes", {"limit": MAX_SMALL_BODY}
        )
    return raw


async def json_body(request: Request, model: type[M], *, empty: M | None = None) -> M:
    """The body as ``model``: 400 when it is not UTF-8 JSON, 422 naming the field at fault.
    With ``empty``, a request without a body means ``empty`` (an optional body)."""
    if empty is not None and not await request.body():
        return empty
    raw = await _raw(request)
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise BadRequest(
            f"line {line}: bytes that are not UTF-8",
            {"line": line},
            code=ErrorCode.INVALID_ENCODING,
        ) from None
    except json.JSONDecodeError as exc:
        raise BadRequest(
            f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
            {"line": exc.lineno, "column": exc.colno},
            code=ErrorCode.INVALID_JSON,
        ) from None
    except RecursionError:
        # The C decoder recurses once per level: a body of 100,000 brackets is refused as
        # such (it answered 500), and nothing the API reads is nested that deep.
        raise BadRequest(
            "invalid JSON: nested too deeply", {"reason": "nesting"}, code=ErrorCode.INVALID_JSON
        ) from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = list(first["loc"])
        where = ".".join(str(p) for p in loc) or "body"
        raise Unprocessable(
            f"{where}: {first['msg']}", {"loc": loc}, code=ErrorCode.INVALID_BODY
        ) from None

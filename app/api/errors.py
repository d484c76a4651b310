"""One way to answer every error: ``{"error": {"code", "message", "details"}}`` (docs/api.md)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote_to_bytes

import procrastinate.exceptions
import psycopg
import sqlalchemy.exc
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from app.core.errors import CoreError, ErrorCode
from app.db.engine import is_storage_full, is_transient
from app.errors import AppError, InsufficientStorage, ServiceUnavailable, from_core
from app.observability import logger

__all__ = ["install_error_handlers", "NulGuard"]

_HTTP_CODES = {
    404: ErrorCode.NOT_FOUND,
    405: ErrorCode.METHOD_NOT_ALLOWED,
    401: ErrorCode.UNAUTHORIZED,
    403: ErrorCode.FORBIDDEN,
    413: ErrorCode.PAYLOAD_TOO_LARGE,
    415: ErrorCode.UNSUPPORTED_MEDIA_TYPE,
}


def _body(code: str, message: str, details: dict[str, Any]) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details}}


_log = logger("serialpub.api")


async def _app_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, AppError)
    headers = {"WWW-Authenticate": "Bearer"} if exc.status_code == 401 else {}
    if exc.retry_after is not None:
        headers["Retry-After"] = str(exc.retry_after)
    return JSONResponse(exc.body(), status_code=exc.status_code, headers=headers or None)


async def _database_error(request: Request, exc: Exception) -> JSONResponse:
    """A database fault: 507 when PostgreSQL had no space left, 503 with ``Retry-After`` when
    it did not answer (a restart, a failover, a cut connection); the request's transaction
    was rolled back either way, so nothing is half-written. Any other database error is a
    fault of the service: raised on, to the 500 handler (which logs its traceback)."""
    if is_storage_full(exc):
        runtime = getattr(request.app.state, "runtime", None)
        if runtime is not None:
            await runtime.db.storage.failed("request")
        _log.error("the database has no space left", path=request.url.path)
        return await _app_error(
            request,
            InsufficientStorage(
                "the database has no space left; nothing was stored: try again once the "
                "operator has added space",
                {"reason": "disk_full"},
            ),
        )
    if is_transient(exc):
        _log.warning(
            "database unavailable during a request", path=request.url.path, error=type(exc).__name__
        )
        return await _app_error(
            request,
            ServiceUnavailable(
                "the database is unavailable (a restart or a failover); nothing was changed: "
                "send the request again",
                {"reason": type(exc).__name__},
            ),
        )
    raise exc


async def _core_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, CoreError)
    return await _app_error(request, from_core(exc))


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = exc.errors()
    first = errors[0] if errors else {"loc": [], "msg": "invalid request"}
    loc = [p for p in first.get("loc", []) if p != "body"]
    where = ".".join(str(p) for p in loc) or "request"
    details = {"loc": list(first.get("loc", [])), "errors": len(errors)}
    return JSONResponse(
        _body(ErrorCode.INVALID_REQUEST, f"{where}: {first.get('msg')}", details), status_code=422
    )


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    code = _HTTP_CODES.get(exc.status_code, ErrorCode.HTTP_ERROR)
    return JSONResponse(
        _body(code, str(exc.detail), {"path": request.url.path}),
        status_code=exc.status_code,
        headers=exc.headers,
    )


async def _internal_error(request: Request, exc: Exception) -> JSONResponse:
    # The traceback is logged by the server (Starlette re-raises after answering); the
    # client gets the API's error body rather than a plain-text page.
    return JSONResponse(
        _body(ErrorCode.INTERNAL_ERROR, "the server failed to answer this request", {}),
        status_code=500,
    )


class NulGuard:
    """Refuses NUL in the path (404) or the query (422) with the error body.

    PostgreSQL cannot hold NUL in text: a name or parameter holding one reached a query and
    failed there with a 500 in plain text. Nothing named with NUL can exist, so the path
    answers 404; a query value is bad input, 422.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            path = scope.get("path", "")
            query = unquote_to_bytes(scope.get("query_string", b"").replace(b"+", b" "))
            if "\x00" in path:
                await _send(
                    send,
                    404,
                    _body(ErrorCode.NOT_FOUND, "no such path: it holds a NUL character", {}),
                )
                return
            if b"\x00" in query:
                await _send(
                    send,
                    422,
                    _body(
                        ErrorCode.INVALID_REQUEST,
                        "query: a parameter holds a NUL character",
                        {"loc": ["query"]},
                    ),
                )
                return
        await self.app(scope, receive, send)


async def _send(send: Any, status: int, body: dict[str, Any]) -> None:
    data = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(AppError, _app_error)
    app.add_exception_handler(CoreError, _core_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(HTTPException, _http_error)
    for database_error in (
        sqlalchemy.exc.DBAPIError,
        psycopg.Error,
        procrastinate.exceptions.ConnectorException,
    ):
        app.add_exception_handler(database_error, _database_error)
    app.add_exception_handler(Exception, _internal_error)
    app.add_middleware(NulGuard)

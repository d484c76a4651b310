"""One way to answer every error: ``{"error": {"code", "message", "details"}}`` (API.md)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from app.core.errors import CoreError
from app.errors import AppError, from_core

__all__ = ["install_error_handlers"]

_HTTP_CODES = {404: "not_found", 405: "method_not_allowed", 401: "unauthorized",
               403: "forbidden", 413: "payload_too_large", 415: "unsupported_media_type"}


def _body(code: str, message: str, details: dict[str, Any]) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details}}


async def _app_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, AppError)
    headers = {"WWW-Authenticate": "Bearer"} if exc.status_code == 401 else None
    return JSONResponse(exc.body(), status_code=exc.status_code, headers=headers)


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
    return JSONResponse(_body("invalid_request", f"{where}: {first.get('msg')}", details),
                        status_code=422)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    code = _HTTP_CODES.get(exc.status_code, "http_error")
    return JSONResponse(_body(code, str(exc.detail), {"path": request.url.path}),
                        status_code=exc.status_code, headers=exc.headers)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(AppError, _app_error)
    app.add_exception_handler(CoreError, _core_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(HTTPException, _http_error)

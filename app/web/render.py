"""Pages: the templates, the headers every web response carries, and errors as pages.

Every response of the web view gets :data:`SECURITY_HEADERS`: a Content-Security-Policy
that allows scripts, styles and images from the service itself only (no inline script or
style, no other origin), no framing, no referrer, and ``Cache-Control: no-store`` (pages
show figures a role may read and another may not). A service error (403, 404, …) is a page
with its message; a reader who is not signed in is sent to the sign-in form.
"""

from __future__ import annotations

import datetime as dt
import math
import time
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import RedirectResponse
from fastapi.routing import APIRoute
from fastapi.templating import Jinja2Templates
from markupsafe import Markup, escape

from app.errors import AppError, NotFound, Unauthorized
from app.web.trail import record as record_reads

__all__ = ["SECURITY_HEADERS", "WebRoute", "page", "secured", "sign_in_redirect"]

HERE = Path(__file__).parent

SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; "
    "base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    # same-origin, not no-referrer: with no-referrer a browser posts forms with "Origin: null".
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def _number(value: float | int | None, digits: int = 4) -> str:
    """A figure as people read it: thousands separated, at most ``digits`` significant
    decimals, ``∞`` for no bound, ``—`` for none."""
    if value is None:
        return "—"
    if isinstance(value, float) and math.isinf(value):
        return "∞"
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.{digits}g}" if abs(value) < 10**digits else f"{value:,.0f}"


def _when(value: dt.datetime | None) -> str:
    return "—" if value is None else value.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _terms(row: list[str]) -> Markup:
    """A published row's public terms; a row whose every public term was removed (only
    private ones, now counted in its cluster) says so rather than being a blank cell."""
    if not row:
        return Markup('<span class="none">no public term</span>')
    return escape(" ".join(row))


templates = Jinja2Templates(directory=HERE / "templates")
templates.env.filters["number"] = _number
templates.env.filters["when"] = _when
templates.env.filters["terms"] = _terms
templates.env.filters["path"] = lambda value: quote(str(value), safe="")


def secured(response: Response) -> Response:
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    return response


def page(
    request: Request, template: str, context: Mapping[str, Any], status_code: int = 200
) -> Response:
    """``template`` rendered with ``context`` (and the request's reader as ``user``)."""
    values = {"user": getattr(request.state, "web_user", None), **context}
    return templates.TemplateResponse(request, template, values, status_code=status_code)


def sign_in_redirect(request: Request) -> Response:
    """To the sign-in form, which brings the reader back here afterwards."""
    back = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/web/sign-in?next={quote(back, safe='')}", status_code=303)


def error_page(request: Request, exc: AppError) -> Response:
    return page(
        request,
        "error.html",
        {"status": exc.status_code, "message": exc.message, "code": str(exc.code)},
        status_code=exc.status_code,
    )


class WebRoute(APIRoute):
    """A route of the web view: service errors as pages, the security headers on every
    response, a reader who is not signed in sent to the sign-in form, and what the page
    read recorded in the access trail (:mod:`app.web.trail`)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Response:
            at = time.time()
            try:
                response = await handler(request)
            except Unauthorized:
                response = sign_in_redirect(request)
            except AppError as exc:
                response = error_page(request, exc)
            except RequestValidationError:
                # A malformed number in the path or query names no page that exists.
                response = error_page(request, NotFound("no such page"))
            record_reads(request, response.status_code, at)
            return secured(response)

        return route

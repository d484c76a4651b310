"""Signing in and out: the API key is posted once, in a form's body, and becomes a session
cookie (:mod:`app.services.sessions`); it is never put in a URL, a cookie or a log. Signing
out ends the session on the service, not only in the browser."""

from __future__ import annotations

import secrets
from typing import Annotated

from fastapi import APIRouter, Form, Request, Response
from fastapi.responses import RedirectResponse

from app.errors import Unauthorized
from app.services.sessions import close_session, open_session, session_of
from app.web.deps import (
    CSRF_COOKIE,
    SESSION_COOKIE,
    RuntimeDep,
    SessionDep,
    check_origin,
    check_token,
    set_cookie,
)
from app.web.render import WebRoute, page

__all__ = ["router"]

router = APIRouter(prefix="/web", route_class=WebRoute, include_in_schema=False)

#: How long a sign-in form may wait before it is posted.
_FORM_SECONDS = 3600


def _next(value: str | None) -> str:
    """Where to go after signing in: a page of the web view, never another site."""
    if value and value.startswith("/web/") and not value.startswith(("//", "/web//")):
        if "\\" not in value and not value.startswith("/web/sign-"):
            return value
    return "/web/series"


def _form(request: Request, next_page: str, message: str | None, status: int) -> Response:
    value = secrets.token_urlsafe(32)
    response = page(
        request,
        "sign_in.html",
        {"csrf": value, "next": _next(next_page), "message": message},
        status_code=status,
    )
    set_cookie(request, response, CSRF_COOKIE, value, _FORM_SECONDS)
    return response


@router.get("/sign-in")
async def sign_in_form(request: Request, next: str | None = None) -> Response:  # noqa: A002
    return _form(request, next or "", None, 200)


@router.post("/sign-in")
async def sign_in(
    request: Request,
    runtime: RuntimeDep,
    session: SessionDep,
    key: Annotated[str, Form(max_length=500)] = "",
    csrf: Annotated[str, Form(max_length=200)] = "",
    next: Annotated[str, Form(max_length=2000)] = "",  # noqa: A002
) -> Response:
    check_origin(request)
    check_token(request.cookies.get(CSRF_COOKIE), csrf)
    try:
        opened = await open_session(session, runtime.secret, key.strip())
    except Unauthorized:
        return _form(request, next, "That key is unknown, revoked or expired.", 401)
    response = RedirectResponse(_next(next), status_code=303)
    set_cookie(request, response, SESSION_COOKIE, opened.token, opened.seconds)
    response.delete_cookie(CSRF_COOKIE, path="/web")
    return response


@router.post("/sign-out")
async def sign_out(
    request: Request,
    runtime: RuntimeDep,
    session: SessionDep,
    csrf: Annotated[str, Form(max_length=200)] = "",
) -> Response:
    check_origin(request)
    token = request.cookies.get(SESSION_COOKIE)
    current = await session_of(session, runtime.secret, token) if token else None
    if current is not None:
        check_token(current.csrf, csrf)
        # Ended here, not only in this browser: a copy of the cookie reads nothing more.
        await close_session(session, current)
    response = RedirectResponse("/web/sign-in", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/web")
    return response

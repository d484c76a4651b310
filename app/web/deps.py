"""The web view's dependencies: the runtime, a read session, the signed-in reader, and the
cookies that carry a sign-in."""

from __future__ import annotations

import hmac
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import Forbidden, Unauthorized
from app.runtime import Runtime
from app.services.sessions import WebSession, session_of

__all__ = [
    "CSRF_COOKIE",
    "SESSION_COOKIE",
    "ReaderDep",
    "RuntimeDep",
    "SessionDep",
    "check_origin",
    "check_token",
    "set_cookie",
]

SESSION_COOKIE = "serialpub_session"
#: The sign-in form's anti-CSRF value, before there is a session to hold one.
CSRF_COOKIE = "serialpub_signin"


async def _runtime(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


RuntimeDep = Annotated[Runtime, Depends(_runtime)]


async def _session(runtime: RuntimeDep) -> AsyncIterator[AsyncSession]:
    # A transaction keeps what one page shows consistent; pages write nothing, signing in and
    # out their sign-in only (committed before the answer leaves: scope="function").
    async with runtime.db.sessionmaker() as session, session.begin():
        yield session


SessionDep = Annotated[AsyncSession, Depends(_session, scope="function")]


async def _reader(request: Request, runtime: RuntimeDep, session: SessionDep) -> WebSession:
    """The signed-in reader (its sign-in and key read again: signed out, or a key revoked or
    expired, is no reader); a page
    on a series' path also checks that the key may read that series (403)."""
    token = request.cookies.get(SESSION_COOKIE)
    found = await session_of(session, runtime.secret, token) if token else None
    if found is None:
        raise Unauthorized("sign in with an API key")
    request.state.web_user = found
    name = request.path_params.get("name")
    if name is not None:
        found.principal.require_series(name)
    return found


ReaderDep = Annotated[WebSession, Depends(_reader)]


def set_cookie(request: Request, response: Response, name: str, value: str, max_age: int) -> None:
    """HttpOnly, SameSite=Strict, for the web view's paths only, Secure over https."""
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        path="/web",
        secure=request.url.scheme == "https",
        httponly=True,
        samesite="strict",
    )


def check_origin(request: Request) -> None:
    """403 for a form posted from another site (``Origin`` or ``Sec-Fetch-Site`` say so):
    with SameSite=Strict cookies and a token in every form, a third line of defence."""
    origin = request.headers.get("origin")
    if origin is not None and origin != f"{request.url.scheme}://{request.url.netloc}":
        raise Forbidden("a form of this site must be posted from this site")
    if request.headers.get("sec-fetch-site") not in (None, "same-origin", "none"):
        raise Forbidden("a form of this site must be posted from this site")


def check_token(expected: str | None, given: str | None) -> None:
    """403 unless the form echoes the value its page was given (anti-CSRF)."""
    if not expected or not given or not hmac.compare_digest(expected, given):
        raise Forbidden("this form has expired: load the page again")

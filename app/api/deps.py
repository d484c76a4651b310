"""Typed dependencies: runtime, one session per request, the caller's key."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Annotated

from fastapi import Depends, Path, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.ext.asyncio import AsyncSession

from app.api.access import PRINCIPAL
from app.runtime import Runtime
from app.services.auth import Principal, authenticate, authenticate_reader

__all__ = [
    "AdminDep",
    "AuditorDep",
    "PublisherDep",
    "ReadableDep",
    "ReadersDep",
    "ReleaseNo",
    "RuntimeDep",
    "SessionDep",
    "PrincipalDep",
    "READER_ROLES",
    "StandalonePrincipalDep",
    "ReaderDep",
    "get_runtime",
    "get_session",
    "get_principal",
    "get_principal_standalone",
    "get_reader",
    "get_readable",
    "allowed",
]

_bearer = HTTPBearer(auto_error=False, description="An API key: `Authorization: Bearer KEY`")


async def get_runtime(request: Request) -> Runtime:
    # async: FastAPI runs a plain ``def`` dependency in its thread pool, a hand-off per
    # request that showed in the read path's tail latency.
    runtime: Runtime = request.app.state.runtime
    return runtime


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]


async def get_session(runtime: RuntimeDep) -> AsyncIterator[AsyncSession]:
    """A session in a transaction: committed when the handler returns (before the response is
    sent), rolled back when it raises. Services and repositories only flush."""
    async with runtime.db.sessionmaker() as session, session.begin():
        yield session


SessionDep = Annotated[AsyncSession, Depends(get_session, scope="function")]


Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]


def _header(credentials: HTTPAuthorizationCredentials | None) -> str | None:
    return f"{credentials.scheme} {credentials.credentials}" if credentials else None


# Each of the three leaves the caller in the request's scope, where the access trail
# (app.api.access) finds it once the response has started: a refused attempt is recorded too.


async def get_principal(
    session: SessionDep, credentials: Credentials, request: Request
) -> Principal:
    """The caller's key (401 when missing, unknown or expired), in the request's session."""
    principal = await authenticate(session, _header(credentials))
    request.scope[PRINCIPAL] = principal
    return principal


async def get_principal_standalone(
    runtime: RuntimeDep, credentials: Credentials, request: Request
) -> Principal:
    """The same in a short session of its own, for routes that must not hold a connection
    while they read a long body."""
    async with runtime.db.session() as session:
        principal = await authenticate(session, _header(credentials))
    request.scope[PRINCIPAL] = principal
    return principal


async def get_reader(
    runtime: RuntimeDep, credentials: Credentials, name: str, request: Request
) -> tuple[Principal, int | None]:
    """The caller's key and the id of series ``name`` (``None``: none), in one statement and
    no session: for the routes that serve stored bytes."""
    reader = await authenticate_reader(runtime.db, _header(credentials), name)
    request.scope[PRINCIPAL] = reader[0]
    return reader


PrincipalDep = Annotated[Principal, Depends(get_principal)]
ReaderDep = Annotated[tuple[Principal, int | None], Depends(get_reader)]
StandalonePrincipalDep = Annotated[Principal, Depends(get_principal_standalone)]

#: A release number as the database holds it (int4): larger ones answered 500 from PostgreSQL.
ReleaseNo = Annotated[int, Path(ge=1, le=2**31 - 1, description="1, 2, 3… in posting order")]


# Roles as dependencies. FastAPI runs a route's dependencies before it validates the route's
# own path, query and header parameters, and reports those only if every dependency passed:
# a check in the handler's body came after them, so an analyst asking an auditor's endpoint
# with a missing or malformed parameter got 422 (which tells how to phrase the request)
# instead of 403. Here the key's role and, on a series' path, its series come first.


def _check(principal: Principal, roles: tuple[str, ...], request: Request) -> Principal:
    principal.require(*roles)
    name = request.path_params.get("name")
    if name is not None:
        principal.require_series(name)
    return principal


def allowed(*roles: str, standalone: bool = False) -> Callable[..., Awaitable[Principal]]:
    """A dependency: the caller's key, 403 unless its role is one of ``roles`` (admins pass)
    and, on a path under ``/v1/series/{name}``, it may reach that series. ``standalone``:
    authenticated in a short session of its own (:func:`get_principal_standalone`)."""
    if standalone:

        async def standalone_check(
            principal: StandalonePrincipalDep, request: Request
        ) -> Principal:
            return _check(principal, roles, request)

        return standalone_check

    async def check(principal: PrincipalDep, request: Request) -> Principal:
        return _check(principal, roles, request)

    return check


#: Who may read a series' releases (admins pass everywhere).
READER_ROLES = ("analyst", "auditor", "publisher")


async def get_readable(reader: ReaderDep, request: Request) -> tuple[Principal, int | None]:
    """:func:`get_reader`, refused (403) for a key that may not read the series' releases."""
    _check(reader[0], READER_ROLES, request)
    return reader


AdminDep = Annotated[Principal, Depends(allowed("admin"))]
AuditorDep = Annotated[Principal, Depends(allowed("auditor"))]
ReadersDep = Annotated[Principal, Depends(allowed(*READER_ROLES))]
#: Publishers posting a body: authenticated without holding a session while it streams.
PublisherDep = Annotated[Principal, Depends(allowed("publisher", standalone=True))]
ReadableDep = Annotated[tuple[Principal, int | None], Depends(get_readable)]

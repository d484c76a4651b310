"""Typed dependencies: runtime, one session per request, the caller's key."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, Path, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.ext.asyncio import AsyncSession

from app.runtime import Runtime
from app.services.auth import Principal, authenticate, authenticate_reader

__all__ = [
    "ReleaseNo",
    "RuntimeDep",
    "SessionDep",
    "PrincipalDep",
    "StandalonePrincipalDep",
    "ReaderDep",
    "get_runtime",
    "get_session",
    "get_principal",
    "get_principal_standalone",
    "get_reader",
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


async def get_principal(session: SessionDep, credentials: Credentials) -> Principal:
    """The caller's key (401 when missing or unknown), in the request's session."""
    return await authenticate(session, _header(credentials))


async def get_principal_standalone(runtime: RuntimeDep, credentials: Credentials) -> Principal:
    """The same in a short session of its own, for routes that must not hold a connection
    while they read a long body."""
    async with runtime.db.session() as session:
        return await authenticate(session, _header(credentials))


async def get_reader(
    runtime: RuntimeDep, credentials: Credentials, name: str
) -> tuple[Principal, int | None]:
    """The caller's key and the id of series ``name`` (``None``: none), in one statement and
    no session: for the routes that serve stored bytes."""
    return await authenticate_reader(runtime.db, _header(credentials), name)


PrincipalDep = Annotated[Principal, Depends(get_principal)]
ReaderDep = Annotated[tuple[Principal, int | None], Depends(get_reader)]
StandalonePrincipalDep = Annotated[Principal, Depends(get_principal_standalone)]

#: A release number as the database holds it (int4): larger ones answered 500 from PostgreSQL.
ReleaseNo = Annotated[int, Path(ge=1, le=2**31 - 1, description="1, 2, 3… in posting order")]

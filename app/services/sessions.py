"""Signing in to the web view: an API key presented once, then a session that ends with it.

The key is checked as the API checks it (:func:`app.services.auth.authenticate`) and never
kept. Each sign-in is a row (:class:`app.db.models.WebSignIn`); the session cookie's token
names it and a random anti-CSRF value, signed with a key derived from the service's secret
(``itsdangerous``), so that no token can be made up and every process of the service accepts
another's. Every request reads the sign-in together with its key: signing out (the row
deleted), the key's revocation, its expiry and a rotation's end of grace end the session at
once. A sign-in lasts :data:`SESSION_SECONDS` at most, and never past its key's expiry.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
import uuid
from dataclasses import dataclass

from itsdangerous import BadData, URLSafeTimedSerializer
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.base import utcnow
from app.db.models import WebSignIn
from app.db.repositories.keys import KeyRepository
from app.db.repositories.sign_ins import SignInRepository
from app.services.access_trail import TRAIL
from app.services.auth import Principal, authenticate

__all__ = [
    "SESSION_SECONDS",
    "SignedIn",
    "WebSession",
    "close_session",
    "open_session",
    "session_of",
]

#: How long a sign-in lasts at most (a working day).
SESSION_SECONDS = 8 * 3600
_SALT = "serialpub.web.session"


@dataclass(frozen=True, slots=True)
class WebSession:
    """A signed-in reader: its key as a principal, the value its forms must echo, and the
    sign-in it reads through."""

    principal: Principal
    csrf: str
    sign_in: uuid.UUID


@dataclass(frozen=True, slots=True)
class SignedIn:
    """A new session, its cookie's token and how many seconds the cookie should live."""

    session: WebSession
    token: str
    seconds: int


def _serializer(secret: bytes) -> URLSafeTimedSerializer:
    # A key of its own, derived from the service's secret: the secret also keys individuals'
    # pseudonyms, and a token must not be usable as one (nor the reverse).
    derived = hmac.new(secret, b"serialpub web session tokens", hashlib.sha256).digest()
    return URLSafeTimedSerializer(derived, salt=_SALT)


async def open_session(session: AsyncSession, secret: bytes, key: str) -> SignedIn:
    """Sign in with an API key (401 for an unknown, revoked or expired key, as the API
    answers it); the sign-in is stored in ``session``'s transaction."""
    principal = await authenticate(session, f"Bearer {key}")
    now = utcnow()
    ends = now + dt.timedelta(seconds=SESSION_SECONDS)
    found = await KeyRepository(session).get(principal.key_id)
    if found is not None and found.expires_at is not None:
        ends = min(ends, found.expires_at)
    repo = SignInRepository(session)
    # Housekeeping: nothing reads an expired sign-in again.
    await repo.remove_expired(now)
    sign_in = await repo.add(WebSignIn(id=uuid.uuid4(), key_id=principal.key_id, expires_at=ends))
    csrf = secrets.token_urlsafe(32)
    token = _serializer(secret).dumps({"s": str(sign_in.id), "c": csrf})
    seconds = max(1, int((ends - now).total_seconds()))
    return SignedIn(WebSession(principal, csrf, sign_in.id), token, seconds)


async def session_of(session: AsyncSession, secret: bytes, token: str) -> WebSession | None:
    """The session a token carries; ``None`` when it is forged or too old, was signed out,
    or its key was revoked or has expired since."""
    try:
        payload = _serializer(secret).loads(token, max_age=SESSION_SECONDS)
        sign_in_id, csrf = uuid.UUID(payload["s"]), str(payload["c"])
    except (BadData, KeyError, TypeError, ValueError):
        return None
    found = await SignInRepository(session).with_key(sign_in_id)
    if found is None:
        return None
    sign_in, key = found
    now = utcnow()
    if sign_in.expires_at <= now or key.revoked_at is not None or key.expired(now):
        return None
    TRAIL.key_used(key.id)
    return WebSession(Principal(key.id, key.role, key.series_name), csrf, sign_in.id)


async def close_session(session: AsyncSession, current: WebSession) -> None:
    """Sign out: the sign-in is deleted, so a copy of its cookie reads nothing more."""
    await SignInRepository(session).remove(current.sign_in)

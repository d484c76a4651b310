"""Signing in to the web view: an API key presented once, then a signed session token.

The key is checked as the API checks it (:func:`app.services.auth.authenticate`) and never
kept: the token names the key's id, a random anti-CSRF value and its time, signed with a key
derived from the service's secret (``itsdangerous``), so that every process of the service
accepts it and nothing is stored per session. Each request looks the key up again: a revoked
key ends its sessions at once. A token is good for :data:`SESSION_SECONDS`.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid
from dataclasses import dataclass

from itsdangerous import BadData, URLSafeTimedSerializer
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.repositories.keys import KeyRepository
from app.services.auth import Principal, authenticate

__all__ = ["SESSION_SECONDS", "WebSession", "open_session", "session_of"]

#: How long a sign-in lasts (a working day).
SESSION_SECONDS = 8 * 3600
_SALT = "serialpub.web.session"


@dataclass(frozen=True, slots=True)
class WebSession:
    """A signed-in reader: its key as a principal, and the value its forms must echo."""

    principal: Principal
    csrf: str


def _serializer(secret: bytes) -> URLSafeTimedSerializer:
    # A key of its own, derived from the service's secret: the secret also keys individuals'
    # pseudonyms, and a token must not be usable as one (nor the reverse).
    derived = hmac.new(secret, b"serialpub web session tokens", hashlib.sha256).digest()
    return URLSafeTimedSerializer(derived, salt=_SALT)


async def open_session(session: AsyncSession, secret: bytes, key: str) -> tuple[WebSession, str]:
    """Sign in with an API key: the session and its token (401 for an unknown or revoked
    key, as the API answers it)."""
    principal = await authenticate(session, f"Bearer {key}")
    csrf = secrets.token_urlsafe(32)
    token = _serializer(secret).dumps({"k": str(principal.key_id), "c": csrf})
    return WebSession(principal, csrf), token


async def session_of(session: AsyncSession, secret: bytes, token: str) -> WebSession | None:
    """The session a token carries; ``None`` when it is forged, expired, or its key was
    revoked since."""
    try:
        payload = _serializer(secret).loads(token, max_age=SESSION_SECONDS)
        key_id, csrf = uuid.UUID(payload["k"]), str(payload["c"])
    except (BadData, KeyError, TypeError, ValueError):
        return None
    key = await KeyRepository(session).get(key_id)
    if key is None or key.revoked_at is not None:
        return None
    return WebSession(Principal(key.id, key.role, key.series_name), csrf)

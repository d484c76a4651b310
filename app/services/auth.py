"""API keys and roles (API.md "Roles and keys")."""

from __future__ import annotations

import hashlib
import secrets
import uuid
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.base import utcnow
from app.db.models import ApiKey
from app.db.repositories.keys import KeyRepository
from app.errors import Forbidden, NotFound, Unauthorized, Unprocessable

__all__ = ["Principal", "ROLES", "hash_key", "create_key", "revoke_key", "authenticate",
           "ensure_admin_token"]

ROLES = ("admin", "publisher", "analyst", "auditor")


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Principal:
    """The caller, as its key says."""

    key_id: uuid.UUID
    role: str
    series: str | None

    @property
    def sees_private(self) -> bool:
        """Auditors and admins see counterfeit totals, FP2 and job reports."""
        return self.role in ("admin", "auditor")

    def require(self, *roles: str) -> None:
        """403 unless the role is one of ``roles`` (admins pass everywhere)."""
        if self.role != "admin" and self.role not in roles:
            raise Forbidden(
                f"role {self.role!r} may not do this; it needs {' or '.join(roles)}",
                {"role": self.role, "required": list(roles)},
            )

    def require_series(self, name: str) -> None:
        """403 for a publisher whose key names another series."""
        if self.role == "publisher" and self.series is not None and self.series != name:
            raise Forbidden(
                f"this key publishes to series {self.series!r}, not {name!r}",
                {"series": name, "key_series": self.series},
            )


async def authenticate(session: AsyncSession, authorization: str | None) -> Principal:
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("missing API key: send 'Authorization: Bearer KEY'")
    key = await KeyRepository(session).by_hash(hash_key(token.strip()))
    if key is None:
        raise Unauthorized("unknown or revoked API key")
    return Principal(key.id, key.role, key.series_name)


async def create_key(
    session: AsyncSession, role: str, series: str | None, *, value: str | None = None
) -> tuple[ApiKey, str]:
    """A new key; the returned plain value is shown once and never stored."""
    if role not in ROLES:
        raise Unprocessable(f"role must be one of {', '.join(ROLES)}", {"field": "role"})
    if series is not None and role != "publisher":
        raise Unprocessable("only publisher keys name a series", {"field": "series"})
    plain = value or f"sp_{secrets.token_urlsafe(32)}"
    key = ApiKey(id=uuid.uuid4(), key_hash=hash_key(plain), role=role, series_name=series)
    await KeyRepository(session).add(key)
    return key, plain


async def revoke_key(session: AsyncSession, key_id: uuid.UUID) -> None:
    key = await KeyRepository(session).get(key_id)
    if key is None or key.revoked_at is not None:
        raise NotFound(f"no key {key_id}", {"id": str(key_id)})
    key.revoked_at = utcnow()
    await session.flush()


async def ensure_admin_token(session: AsyncSession, token: str) -> bool:
    """Make ``SERIALPUB_ADMIN_TOKEN`` an admin key, unless it was revoked; ``False`` then.

    A revoked bootstrap token stays revoked across restarts: reviving it at every start would
    undo the revocation of a leaked token. Set a new value to bootstrap again.
    """
    key = await KeyRepository(session).by_hash(hash_key(token), include_revoked=True)
    if key is None:
        await create_key(session, "admin", None, value=token)
        return True
    if key.revoked_at is not None:
        return False
    if key.role != "admin":
        key.role, key.series_name = "admin", None
        await session.flush()
    return True

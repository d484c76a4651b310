"""API keys and roles (API.md "Roles and keys")."""

from __future__ import annotations

import hashlib
import secrets
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.base import utcnow
from app.db.models import ApiKey
from app.db.repositories.keys import KeyRepository
from app.errors import Forbidden, NotFound, Unauthorized, Unprocessable

__all__ = ["Principal", "ROLES", "hash_key", "create_key", "revoke_key", "authenticate",
           "ensure_admin_token", "list_keys"]

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
        """403 for a key scoped to another series (publishers, analysts, auditors)."""
        if self.series is not None and self.series != name:
            raise Forbidden(
                f"this key is scoped to series {self.series!r}, not {name!r}",
                {"series": name, "key_series": self.series},
            )

    def sees_series(self, name: str) -> bool:
        return self.series is None or self.series == name


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
    if series is not None and role == "admin":
        raise Unprocessable("admin keys are not scoped to a series", {"field": "series"})
    plain = value or f"sp_{secrets.token_urlsafe(32)}"
    key = ApiKey(id=uuid.uuid4(), key_hash=hash_key(plain), role=role, series_name=series)
    await KeyRepository(session).add(key)
    return key, plain


async def list_keys(session: AsyncSession) -> Sequence[ApiKey]:
    return await KeyRepository(session).active()


async def revoke_key(session: AsyncSession, key_id: uuid.UUID) -> None:
    key = await KeyRepository(session).get(key_id)
    if key is None or key.revoked_at is not None:
        raise NotFound(f"no key {key_id}", {"id": str(key_id)})
    key.revoked_at = utcnow()
    await session.flush()


async def ensure_admin_token(session: AsyncSession, token: str) -> None:
    """Make ``SERIALPUB_ADMIN_TOKEN`` a valid admin key (idempotent)."""
    key = await KeyRepository(session).by_hash(hash_key(token), include_revoked=True)
    if key is None:
        await create_key(session, "admin", None, value=token)
    elif key.revoked_at is not None or key.role != "admin":
        key.revoked_at, key.role, key.series_name = None, "admin", None
        await session.flush()

"""API keys and roles (docs/api.md "Roles and keys")."""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import secrets
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from app.core.errors import ErrorCode
from app.db.base import utcnow
from app.db.engine import Database
from app.db.models import ApiKey
from app.db.repositories.keys import KeyRepository
from app.db.repositories.reads import key_and_series
from app.db.repositories.series import SeriesRepository
from app.errors import Conflict, Forbidden, NotFound, Unauthorized, Unprocessable
from app.services.access_trail import TRAIL

__all__ = [
    "Principal",
    "ROLES",
    "hash_key",
    "create_key",
    "revoke_key",
    "rotate_key",
    "MAX_GRACE",
    "authenticate",
    "authenticate_reader",
    "cached_reader",
    "clear_reader_cache",
    "configure_reader_cache",
    "ensure_admin_token",
    "list_keys",
]

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


def _presented_hash(authorization: str | None) -> str:
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("missing API key: send 'Authorization: Bearer KEY'")
    return hash_key(token.strip())


#: The longest grace period a rotated key keeps working.
MAX_GRACE = dt.timedelta(days=90)


def _expired(expires_at: dt.datetime) -> Unauthorized:
    return Unauthorized(
        f"this API key expired at {expires_at.isoformat()}; ask an admin for a new one",
        {"expired_at": expires_at.isoformat()},
    )


async def authenticate(session: AsyncSession, authorization: str | None) -> Principal:
    key = await KeyRepository(session).by_hash(_presented_hash(authorization))
    if key is None:
        raise Unauthorized("unknown or revoked API key")
    if key.expires_at is not None and key.expired(utcnow()):
        raise _expired(key.expires_at)
    TRAIL.key_used(key.id)
    return Principal(key.id, key.role, key.series_name)


_Lookup = asyncio.Task[tuple[Principal, int | None]]


@dataclass(frozen=True, slots=True)
class _Reader:
    expires: float
    principal: Principal
    series_id: int
    #: The key's own expiry, in seconds since the epoch (``inf``: none).
    key_expires: float


class _ReaderCache:
    """Recently authenticated readers, trusted for ``ttl`` seconds: the read path's only
    query costs more than serving the bytes. An entry past half its life is refreshed in the
    background by one task, so hot keys never wait for the database (when every request in
    flight missed at once, their queries queued on the pool and made the p99). A revocation
    clears this process' entries at once; other processes stop accepting the key within
    ``ttl`` (0 disables the cache)."""

    def __init__(self, ttl: float = 1.0, max_items: int = 10_000) -> None:
        self.ttl = ttl
        self.max_items = max_items
        self._items: dict[tuple[str, str], _Reader] = {}
        self._pending: dict[tuple[str, str], _Lookup] = {}

    def clear(self) -> None:
        self._items.clear()

    def fresh(self, db: Database, key: tuple[str, str]) -> tuple[Principal, int] | None:
        """The reader if this process trusts it now, without waiting (``None``: ask
        :meth:`get`); one past half its life is refreshed in the background."""
        found = self._items.get(key)
        now = time.monotonic()
        if found is None or found.expires <= now or found.key_expires <= time.time():
            return None
        if found.expires - now < self.ttl / 2 and key not in self._pending:
            self._start(db, key)
        return found.principal, found.series_id

    async def get(self, db: Database, key: tuple[str, str]) -> tuple[Principal, int | None]:
        found = self.fresh(db, key)
        if found is not None:
            return found
        # Concurrent misses of one key share one query.
        task = self._pending.get(key) or self._start(db, key)
        return await asyncio.shield(task)

    def _start(self, db: Database, key: tuple[str, str]) -> _Lookup:
        task = asyncio.get_running_loop().create_task(self._lookup(db, key))
        self._pending[key] = task
        task.add_done_callback(lambda _: self._pending.pop(key, None))
        task.add_done_callback(_ignore_failure)
        return task

    async def _lookup(self, db: Database, key: tuple[str, str]) -> tuple[Principal, int | None]:
        started = time.monotonic()
        async with db.read_connection() as conn:
            found = await key_and_series(conn, key[0], key[1])
        if found is None:
            self._items.pop(key, None)
            raise Unauthorized("unknown or revoked API key")
        if found.expires_at is not None and found.expires_at <= utcnow():
            self._items.pop(key, None)
            raise _expired(found.expires_at)
        principal = Principal(found.key_id, found.role, found.key_series)
        key_expires = found.expires_at.timestamp() if found.expires_at else float("inf")
        # A missing series is never remembered: one created meanwhile must be found.
        if found.series_id is not None and self.ttl > 0:
            if len(self._items) >= self.max_items:
                self._items.clear()
            self._items[key] = _Reader(started + self.ttl, principal, found.series_id, key_expires)
        return principal, found.series_id


def _ignore_failure(task: _Lookup) -> None:
    # Awaiting callers get the error; a background refresh that fails leaves the entry to
    # expire, and the next miss queries again and reports the error to its caller.
    if not task.cancelled():
        task.exception()


_READERS = _ReaderCache()


def configure_reader_cache(ttl: float) -> None:
    _READERS.ttl = ttl
    _READERS.clear()


def clear_reader_cache() -> None:
    """Forget this process' readers (a series deleted: its id is no longer its name's)."""
    _READERS.clear()


def cached_reader(
    db: Database, authorization: str | None, series_name: str
) -> tuple[Principal, int] | None:
    """:func:`authenticate_reader` when this process holds the answer (the key and an
    existing series) and trusts it now; ``None`` otherwise, and for a missing key: the
    caller then takes the way that can query and answer errors."""
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    found = _READERS.fresh(db, (hash_key(token.strip()), series_name))
    if found is not None:
        TRAIL.key_used(found[0].key_id)
    return found


async def authenticate_reader(
    db: Database, authorization: str | None, series_name: str
) -> tuple[Principal, int | None]:
    """The caller (401 as :func:`authenticate`) and the named series' id (``None``: no such
    series), in one statement outside any transaction, or from the short-lived cache of
    readers."""
    principal, series_id = await _READERS.get(db, (_presented_hash(authorization), series_name))
    TRAIL.key_used(principal.key_id)
    return principal, series_id


async def create_key(
    session: AsyncSession,
    role: str,
    series: str | None,
    *,
    value: str | None = None,
    expires_at: dt.datetime | None = None,
) -> tuple[ApiKey, str]:
    """A new key (expiring at ``expires_at``, when given); the returned plain value is shown
    once and never stored."""
    if role not in ROLES:
        raise Unprocessable(f"role must be one of {', '.join(ROLES)}", {"field": "role"})
    if series is not None and role == "admin":
        raise Unprocessable("admin keys are not scoped to a series", {"field": "series"})
    if expires_at is not None and expires_at <= utcnow():
        raise Unprocessable(
            f"expires_at {expires_at.isoformat()} is not in the future", {"field": "expires_at"}
        )
    if series is not None and await SeriesRepository(session).get_by_name(series) is None:
        # A key for a series that does not exist yet would be a key to whatever series is
        # later created under that name, by anyone.
        raise NotFound(
            f"no series {series!r}; create the series before its keys", {"series": series}
        )
    plain = value or f"sp_{secrets.token_urlsafe(32)}"
    key = ApiKey(
        id=uuid.uuid4(),
        key_hash=hash_key(plain),
        role=role,
        series_name=series,
        expires_at=expires_at,
    )
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
    _READERS.clear()


async def rotate_key(
    session: AsyncSession,
    key_id: uuid.UUID,
    grace: dt.timedelta,
    expires_at: dt.datetime | None = None,
) -> tuple[ApiKey, ApiKey, str]:
    """A new key with the role and series of ``key_id``, which keeps working for ``grace``
    more (never longer than it would have); ``(old, new, new's plain value)``.

    The new key expires at ``expires_at`` when given, else, when the old one had an expiry,
    after the same lifetime as the old one (a policy of 90-day keys stays one), else never.
    """
    if not dt.timedelta(0) <= grace <= MAX_GRACE:
        raise Unprocessable(
            f"grace_seconds must be between 0 and {int(MAX_GRACE.total_seconds())}",
            {"field": "grace_seconds"},
        )
    repo = KeyRepository(session)
    old = await repo.get(key_id, for_update=True)
    if old is None or old.revoked_at is not None:
        raise NotFound(f"no key {key_id}", {"id": str(key_id)})
    now = utcnow()
    if old.expires_at is not None and old.expired(now):
        raise Conflict(
            f"key {key_id} expired at {old.expires_at.isoformat()}; create a new key instead",
            {"id": str(key_id), "expired_at": old.expires_at.isoformat()},
            code=ErrorCode.KEY_EXPIRED,
        )
    if old.replaced_by is not None:
        raise Conflict(
            f"key {key_id} was already rotated; its successor is {old.replaced_by}",
            {"id": str(key_id), "replaced_by": str(old.replaced_by)},
            code=ErrorCode.KEY_ALREADY_ROTATED,
        )
    if expires_at is None and old.expires_at is not None:
        expires_at = now + (old.expires_at - old.created_at)
    new, plain = await create_key(session, old.role, None, expires_at=expires_at)
    # The series is copied as it is, not looked up again: a scoped key stays scoped to its
    # name even when that series was deleted (create_key would refuse the name then).
    new.series_name = old.series_name
    end_of_grace = now + grace
    old.expires_at = min(old.expires_at, end_of_grace) if old.expires_at else end_of_grace
    old.replaced_by = new.id
    await session.flush()
    # This process must not trust the old key past its new expiry (other processes check
    # each key's expiry as they read it within SERIALPUB_READ_AUTH_CACHE_SECONDS).
    _READERS.clear()
    return old, new, plain


async def ensure_admin_token(session: AsyncSession, token: str) -> bool:
    """Make ``SERIALPUB_ADMIN_TOKEN`` an admin key, unless it was revoked or has expired
    (rotated, say); ``False`` then.

    A revoked or expired bootstrap token stays so across restarts: reviving it at every start
    would undo the revocation of a leaked token. Set a new value to bootstrap again.
    """
    key = await KeyRepository(session).by_hash(hash_key(token), include_revoked=True)
    if key is None:
        await create_key(session, "admin", None, value=token)
        return True
    if key.revoked_at is not None or key.expired(utcnow()):
        return False
    if key.role != "admin":
        key.role, key.series_name = "admin", None
        await session.flush()
    return True

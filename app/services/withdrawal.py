"""Withdrawing a release (docs/api-releases.md,
"POST /v1/series/{name}/releases/{release_no}/withdraw").

A mistaken upload was permanent. An admin now withdraws it: analysts and publishers get 410
(``release_withdrawn``) for it from then on, the release list marks it with its time and
reason, and auditors and admins still read it, its risk, cover and ledger. It stays in the
series' history: it was public, whoever read it keeps it, so every later release is judged
against it as before (design.md §4), and its number is not reused.

The read path serves stored bytes that each process remembers (:mod:`app.services.renderings`),
so the check is made before them, from the series' withdrawn numbers, which each process
keeps for ``SERIALPUB_READ_AUTH_CACHE_SECONDS`` as it keeps a reader's key: a withdrawal
clears this process' copy at once; another process may serve the release that long more.
"""

from __future__ import annotations

import time

from sqlalchemy.ext.asyncio import AsyncSession

from app.core.errors import ErrorCode
from app.db.base import utcnow
from app.db.engine import Database
from app.db.models import Release, Series
from app.db.repositories.reads import withdrawal_of, withdrawn_releases
from app.db.repositories.releases import ReleaseRepository
from app.errors import Conflict, Gone, NotFound
from app.observability import logger
from app.services.auth import Principal

__all__ = ["configure_withdrawn_cache", "ensure_served", "withdraw_release"]

_log = logger("serialpub.admin")


class _WithdrawnCache:
    """Per process: series id -> (expiry, the numbers of its withdrawn releases)."""

    def __init__(self, ttl: float = 1.0, max_items: int = 10_000) -> None:
        self.ttl = ttl
        self.max_items = max_items
        self._items: dict[int, tuple[float, frozenset[int]]] = {}

    def clear(self) -> None:
        self._items.clear()

    async def numbers(self, db: Database, series_id: int) -> frozenset[int]:
        now = time.monotonic()
        found = self._items.get(series_id)
        if found is not None and found[0] > now:
            return found[1]
        async with db.read_connection() as conn:
            numbers = frozenset(await withdrawn_releases(conn, series_id))
        if self.ttl > 0:
            if len(self._items) >= self.max_items:
                self._items.clear()
            self._items[series_id] = (now + self.ttl, numbers)
        return numbers


_WITHDRAWN = _WithdrawnCache()


def configure_withdrawn_cache(ttl: float) -> None:
    """How long a process trusts what it read of a series' withdrawn releases."""
    _WITHDRAWN.ttl = ttl
    _WITHDRAWN.clear()


async def ensure_served(
    db: Database, principal: Principal, series_id: int, series_name: str, release_no: int
) -> None:
    """410 (``release_withdrawn``) when the release is withdrawn and ``principal`` is not an
    auditor or admin (who still read it: it is part of the history they judge)."""
    if principal.sees_private:
        return
    if release_no not in await _WITHDRAWN.numbers(db, series_id):
        return
    async with db.read_connection() as conn:
        found = await withdrawal_of(conn, series_id, release_no)
    if found is None:
        return  # withdrawn numbers are never taken back: only a deleted release gets here
    at, reason = found
    raise Gone(
        f"release {release_no} of series {series_name!r} was withdrawn: {reason}",
        {
            "series": series_name,
            "release_no": release_no,
            "withdrawn_at": at.isoformat(),
            "reason": reason,
        },
        code=ErrorCode.RELEASE_WITHDRAWN,
    )


async def withdraw_release(
    session: AsyncSession, principal: Principal, series: Series, release_no: int, reason: str
) -> Release:
    """Mark the release withdrawn (404 when there is none; 409 ``already_withdrawn`` the
    second time, the first withdrawal's time and reason kept). Logged with the admin's key id
    and role once the change is flushed in the caller's transaction, which commits before
    the answer."""
    model = await ReleaseRepository(session).get(series.id, release_no, for_update=True)
    if model is None:
        raise NotFound(
            f"series {series.name!r} has no release {release_no}",
            {"series": series.name, "release_no": release_no},
        )
    if model.withdrawn_at is not None:
        raise Conflict(
            f"release {release_no} of series {series.name!r} is already withdrawn",
            {
                "series": series.name,
                "release_no": release_no,
                "withdrawn_at": model.withdrawn_at.isoformat(),
                "reason": model.withdrawal_reason,
            },
            code=ErrorCode.ALREADY_WITHDRAWN,
        )
    model.withdrawn_at = utcnow()
    model.withdrawal_reason = reason
    model.withdrawn_by = principal.key_id
    await session.flush()
    _WITHDRAWN.clear()
    _log.info(
        "release withdrawn",
        series=series.name,
        release_no=release_no,
        reason=reason,
        key_id=str(principal.key_id),
        role=principal.role,
    )
    return model

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

import asyncio
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

__all__ = ["configure_withdrawn_cache", "ensure_served", "served_from_memory", "withdraw_release"]

_log = logger("serialpub.admin")


class _WithdrawnCache:
    """Per process: series id -> (expiry, the numbers of its withdrawn releases).

    Refreshed as the readers' cache is (:mod:`app.services.auth`): an entry past half its
    life is read again by one background task, and concurrent misses share one query. When
    every request in flight found the entry expired at once, each queried for it: fifty
    queries a second on a pool of ten, and the read path's p99 was that queue (a 304 took
    up to 580 ms in the process once a second; its median was 20 ms)."""

    def __init__(self, ttl: float = 1.0, max_items: int = 10_000) -> None:
        self.ttl = ttl
        self.max_items = max_items
        self._items: dict[int, tuple[float, frozenset[int]]] = {}
        self._pending: dict[int, asyncio.Task[frozenset[int]]] = {}
        #: Every query running, those :meth:`clear` forgot included (the loop keeps only a
        #: weak reference to a task).
        self._tasks: set[asyncio.Task[frozenset[int]]] = set()
        #: Bumped by :meth:`clear`: a query started before it does not fill the cache.
        self._generation = 0

    def clear(self) -> None:
        self._items.clear()
        self._pending.clear()
        self._generation += 1

    def fresh(self, db: Database, series_id: int) -> frozenset[int] | None:
        """The numbers if this process trusts them now, without waiting (``None``: ask
        :meth:`numbers`)."""
        found = self._items.get(series_id)
        now = time.monotonic()
        if found is None or found[0] <= now:
            return None
        if found[0] - now < self.ttl / 2 and series_id not in self._pending:
            self._start(db, series_id)
        return found[1]

    async def numbers(self, db: Database, series_id: int) -> frozenset[int]:
        found = self.fresh(db, series_id)
        if found is not None:
            return found
        task = self._pending.get(series_id) or self._start(db, series_id)
        return await asyncio.shield(task)

    def _start(self, db: Database, series_id: int) -> asyncio.Task[frozenset[int]]:
        task = asyncio.get_running_loop().create_task(self._lookup(db, series_id))
        self._pending[series_id] = task
        self._tasks.add(task)

        def done(_: asyncio.Task[frozenset[int]]) -> None:
            self._tasks.discard(task)
            if self._pending.get(series_id) is task:
                del self._pending[series_id]
            # Awaiting callers get the error; a background refresh that fails leaves the
            # entry to expire, and the next miss queries again.
            if not task.cancelled():
                task.exception()

        task.add_done_callback(done)
        return task

    async def _lookup(self, db: Database, series_id: int) -> frozenset[int]:
        started = time.monotonic()
        generation = self._generation
        async with db.read_connection() as conn:
            numbers = frozenset(await withdrawn_releases(conn, series_id))
        if self.ttl > 0 and generation == self._generation:
            if len(self._items) >= self.max_items:
                self._items.clear()
            self._items[series_id] = (started + self.ttl, numbers)
        return numbers


_WITHDRAWN = _WithdrawnCache()


def configure_withdrawn_cache(ttl: float) -> None:
    """How long a process trusts what it read of a series' withdrawn releases."""
    _WITHDRAWN.ttl = ttl
    _WITHDRAWN.clear()


def served_from_memory(db: Database, principal: Principal, series_id: int, release_no: int) -> bool:
    """Whether :func:`ensure_served` would pass, known without waiting; ``False`` also when
    this process cannot tell now (the caller then awaits :func:`ensure_served`)."""
    if principal.sees_private:
        return True
    numbers = _WITHDRAWN.fresh(db, series_id)
    return numbers is not None and release_no not in numbers


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

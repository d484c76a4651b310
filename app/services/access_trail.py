"""The access trail: every operation on releases, their risk, covers, ledgers and on keys,
with the key's id (never the key), its role, the series, the release, the status and the
time (docs/deploy.md, "The access trail"; docs/api.md "GET /v1/access-trail").

Writing one row per read in the request would cost the read path a statement (and a
transaction) per request, against a path that serves stored bytes after a cached key lookup.
Requests append their event to this process' buffer instead, and :meth:`AccessTrail.run`
writes the buffer with one ``COPY`` every ``SERIALPUB_ACCESS_TRAIL_FLUSH_SECONDS`` (at once
for anything that changes state), together with each key's last use. A process killed
without stopping loses at most that interval's reads; a stopping one writes what it holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import itertools
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum, unique
from typing import Any

import orjson
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.engine import Database
from app.db.models import AccessEvent, ApiKey
from app.db.repositories import access_trail as repository
from app.db.repositories.access_trail import EventRow, TrailQuery
from app.observability import ACCESS_EVENTS_DROPPED, logger

__all__ = [
    "AccessAction",
    "AccessTrail",
    "Event",
    "TRAIL",
    "TrailQuery",
    "CLI_ROLE",
    "query",
    "prune_expired",
    "record_now",
    "record_publication",
]

_log = logger("serialpub.access_trail")


@unique
class AccessAction(StrEnum):
    """What an event records (``action``)."""

    RELEASE_PUBLISH = "release.publish"
    RELEASE_DRY_RUN = "release.dry_run"
    RELEASE_LIST = "release.list"
    RELEASE_READ = "release.read"
    RELEASE_WITHDRAW = "release.withdraw"
    RISK_READ = "risk.read"
    COVER_READ = "cover.read"
    LEDGER_READ = "ledger.read"
    STATISTICS_READ = "statistics.read"
    ATTACKS_READ = "attacks.read"
    BACKGROUND_UPLOAD = "background.upload"
    JOB_READ = "job.read"
    JOB_CANCEL = "job.cancel"
    SERIES_CREATE = "series.create"
    SERIES_DELETE = "series.delete"
    KEY_CREATE = "key.create"
    KEY_LIST = "key.list"
    KEY_REVOKE = "key.revoke"
    KEY_ROTATE = "key.rotate"
    TRAIL_READ = "trail.read"
    DATABASE_BACKUP = "database.backup"
    DATABASE_RESTORE = "database.restore"


#: The role recorded for what the command line does (it uses no key).
CLI_ROLE = "cli"


@dataclass(frozen=True, slots=True)
class Event:
    """One operation, as a request records it (``at``: seconds since the epoch)."""

    at: float
    key_id: uuid.UUID | None
    role: str
    action: AccessAction
    series: str | None
    release_no: int | None
    status: int
    details: dict[str, Any] | None = None

    def row(self, count: int = 1) -> EventRow:
        return (
            dt.datetime.fromtimestamp(self.at, dt.UTC),
            self.key_id,
            self.role,
            self.action.value,
            self.series,
            self.release_no,
            self.status,
            orjson.dumps(self.details).decode() if self.details else "{}",
            count,
        )


#: An event waiting to be written, and how many identical requests it stands for.
_Pending = list[Any]


class AccessTrail:
    """This process' events and key uses not yet written, and the loop that writes them.

    Identical requests (same key, role, action, series, release and status, nothing in
    ``details``) until the next write are one event with their number (``requests``),
    stamped with the first one's time: a client reading a release in a loop is one row per
    interval, not one per request (at 3,000 reads a second, one row each cost the read path
    a third of its throughput in PostgreSQL's index upkeep on the same cores).
    """

    def __init__(self, max_pending: int = 200_000) -> None:
        #: Past it (the database refusing writes for long), the oldest events are dropped,
        #: counted and logged, rather than the process running out of memory.
        self.max_pending = max_pending
        self._events: dict[tuple[Any, ...], _Pending] = {}
        self._used: dict[uuid.UUID, float] = {}
        self._wake: asyncio.Event | None = None
        #: Flushes writing now: each done once its write ended (written or not).
        self._writing: set[asyncio.Future[None]] = set()

    def record(self, event: Event, *, urgent: bool = False) -> None:
        """Keep ``event`` for the next write; ``urgent`` (a change of state) wakes the writer."""
        if event.details:
            self._events[(object(),)] = [event, 1]
        else:
            same = (
                event.key_id,
                event.role,
                event.action,
                event.series,
                event.release_no,
                event.status,
            )
            pending = self._events.get(same)
            if pending is None:
                self._events[same] = [event, 1]
            else:
                pending[1] += 1
        if len(self._events) > self.max_pending:
            self._drop(len(self._events) - self.max_pending)
        if urgent and self._wake is not None:
            self._wake.set()

    def _drop(self, dropped: int) -> None:
        for key in list(itertools.islice(self._events, dropped)):
            del self._events[key]
        ACCESS_EVENTS_DROPPED.inc(dropped)
        _log.error("access-trail events dropped: the buffer is full", dropped=dropped)

    def key_used(self, key_id: uuid.UUID) -> None:
        """The key made a request now (its ``last_used_at``)."""
        self._used[key_id] = time.time()

    def pending(self) -> int:
        """Events (rows) waiting to be written."""
        return len(self._events)

    async def flush(self, db: Database) -> int:
        """Write what this process holds; how many events (rows). On a database error the
        events are kept for the next try (oldest dropped past :attr:`max_pending`). Two
        flushes at once each write their own (the buffer is taken whole before any await),
        and a flush returns only once the writes already under way in this process have
        ended too: a query of the trail after it sees every request served before it (the
        writer's loop may hold them in a ``COPY`` that has not committed yet)."""
        loop = asyncio.get_running_loop()
        earlier = {f for f in self._writing if f.get_loop() is loop and not f.done()}
        events, self._events = self._events, {}
        used, self._used = self._used, {}
        if not events and not used:
            if earlier:
                await asyncio.wait(earlier)
            return 0
        mine: asyncio.Future[None] = loop.create_future()
        self._writing.add(mine)
        try:
            if earlier:
                await asyncio.wait(earlier)
            async with db.read_connection() as conn:
                if events:
                    rows = [event.row(count) for event, count in events.values()]
                    await repository.copy_events(conn, rows)
                if used:
                    await repository.mark_keys_used(
                        conn, {k: dt.datetime.fromtimestamp(t, dt.UTC) for k, t in used.items()}
                    )
        except BaseException:
            self._restore(events, used)
            raise
        finally:
            mine.set_result(None)
            self._writing.discard(mine)
        return len(events)

    def _restore(
        self, events: dict[tuple[Any, ...], _Pending], used: dict[uuid.UUID, float]
    ) -> None:
        """Put back what a failed write took (before what came in meanwhile)."""
        for key, (event, count) in self._events.items():
            if key in events:
                events[key][1] += count
            else:
                events[key] = [event, count]
        self._events = events
        for key_id, at in used.items():
            self._used[key_id] = max(at, self._used.get(key_id, at))
        if len(self._events) > self.max_pending:
            self._drop(len(self._events) - self.max_pending)

    async def run(self, db: Database, flush_s: float, retention_days: int) -> None:
        """Write every ``flush_s`` seconds (at once when woken) until cancelled, then write
        what is left; apply the retention once an hour."""
        wake = self._wake = asyncio.Event()
        pruned_at = 0.0
        try:
            while True:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), flush_s)
                wake.clear()
                try:
                    await self.flush(db)
                    if retention_days and time.monotonic() - pruned_at > 3600:
                        pruned_at = time.monotonic()
                        await prune_expired(db, retention_days)
                except Exception:  # the database is away: keep the events, try again
                    _log.exception("writing the access trail failed; retrying")
                    await asyncio.sleep(min(5.0, 10 * flush_s))
        finally:
            if self._wake is wake:
                self._wake = None
            with contextlib.suppress(Exception):
                await asyncio.shield(self.flush(db))


#: This process' trail (the API's requests record into it; its lifespan runs the writer).
TRAIL = AccessTrail()


async def record_now(session: AsyncSession, event: Event) -> None:
    """Write ``event`` in ``session``'s transaction (the command line's operations: no
    writer runs there, and the event must stand or fall with what it records)."""
    at, key_id, role, action, series, release_no, status, details, count = event.row()
    session.add(
        AccessEvent(
            at=at,
            key_id=key_id,
            role=role,
            action=action,
            series=series,
            release_no=release_no,
            status=status,
            details=orjson.loads(details),
            requests=count,
        )
    )
    await session.flush()


#: The role of a publication whose posting key is gone (deleted from the database by hand).
_NO_KEY_ROLE = "unknown"


async def record_publication(
    session: AsyncSession, key_id: uuid.UUID | None, series: str, release_no: int, job: uuid.UUID
) -> None:
    """Name the release a job stored, and the key that posted it: ``release.publish`` with
    the release's number, status 201 and ``details.job``, in the store's transaction, so that
    every stored release has its event (the post's own event, answered before the job ran,
    names only the job)."""
    key = await session.get(ApiKey, key_id) if key_id is not None else None
    event = Event(
        at=time.time(),
        key_id=key_id if key is not None else None,
        role=key.role if key is not None else _NO_KEY_ROLE,
        action=AccessAction.RELEASE_PUBLISH,
        series=series,
        release_no=release_no,
        status=201,
        details={"job": str(job)},
    )
    await record_now(session, event)


async def query(session: AsyncSession, trail_query: TrailQuery) -> Sequence[AccessEvent]:
    return await repository.query_events(session, trail_query)


async def prune_expired(db: Database, retention_days: int) -> int:
    """Delete the events older than ``retention_days`` (0: keep everything); how many."""
    if retention_days <= 0:
        return 0
    before = dt.datetime.now(dt.UTC) - dt.timedelta(days=retention_days)
    total = 0
    while True:
        async with db.session() as session:
            deleted = await repository.prune(session, before)
        total += deleted
        if deleted == 0:
            break
    if total:
        _log.info("access trail pruned", events=total, before=before.isoformat())
    return total

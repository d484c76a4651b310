"""The access trail's rows: written in batches with ``COPY``, read by key, series and time."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from sqlalchemy import and_, delete, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import AccessEvent

__all__ = ["EventRow", "TrailQuery", "copy_events", "mark_keys_used", "query_events", "prune"]

Connection = psycopg.AsyncConnection[Any]

#: ``(at, key_id, role, action, series, release_no, status, details as JSON text, requests)``.
EventRow = tuple[dt.datetime, uuid.UUID | None, str, str, str | None, int | None, int, str, int]

_COPY = (
    "COPY access_events "
    "(at, key_id, role, action, series, release_no, status, details, requests) FROM STDIN"
)


async def copy_events(conn: Connection, rows: Sequence[EventRow]) -> None:
    """Append ``rows`` in one ``COPY`` (an autocommit connection: one transaction)."""
    async with conn.cursor() as cur, cur.copy(_COPY) as copy:
        for row in rows:
            await copy.write_row(row)


async def mark_keys_used(conn: Connection, used: dict[uuid.UUID, dt.datetime]) -> None:
    """Move each key's ``last_used_at`` forward to its time in ``used`` (never back: another
    process may have written a later one)."""
    await conn.execute(
        "UPDATE api_keys AS k SET last_used_at = u.at "
        "FROM unnest(%s::uuid[], %s::timestamptz[]) AS u(id, at) "
        "WHERE k.id = u.id AND (k.last_used_at IS NULL OR k.last_used_at < u.at)",
        (list(used), list(used.values())),
    )


@dataclass(frozen=True, slots=True)
class TrailQuery:
    """What to look for; every field optional. ``after`` is the ``(at, id)`` of the last
    event of the previous page."""

    key_id: uuid.UUID | None = None
    series: str | None = None
    action: str | None = None
    since: dt.datetime | None = None
    until: dt.datetime | None = None
    after: tuple[dt.datetime, int] | None = None
    limit: int = 1000


async def query_events(session: AsyncSession, query: TrailQuery) -> Sequence[AccessEvent]:
    """The matching events, oldest first (by time, then by id)."""
    statement = select(AccessEvent)
    if query.key_id is not None:
        statement = statement.where(AccessEvent.key_id == query.key_id)
    if query.series is not None:
        statement = statement.where(AccessEvent.series == query.series)
    if query.action is not None:
        statement = statement.where(AccessEvent.action == query.action)
    if query.since is not None:
        statement = statement.where(AccessEvent.at >= query.since)
    if query.until is not None:
        statement = statement.where(AccessEvent.at < query.until)
    if query.after is not None:
        at, event_id = query.after
        # Spelled out rather than a row comparison alone, so that the (key_id, at) and
        # (series, at) indexes serve the range.
        statement = statement.where(
            AccessEvent.at >= at,
            or_(AccessEvent.at > at, and_(AccessEvent.at == at, AccessEvent.id > event_id)),
        )
    statement = statement.order_by(AccessEvent.at, AccessEvent.id).limit(query.limit)
    return (await session.scalars(statement)).all()


async def prune(session: AsyncSession, before: dt.datetime, batch: int = 10_000) -> int:
    """Delete one batch of events older than ``before``; how many (repeat until 0: short
    transactions, so that a first pruning of years of events never holds one for long)."""
    oldest = (
        select(AccessEvent.id).where(AccessEvent.at < before).order_by(AccessEvent.at).limit(batch)
    )
    result = await session.execute(delete(AccessEvent).where(AccessEvent.id.in_(oldest)))
    return int(result.rowcount or 0)  # type: ignore[attr-defined]

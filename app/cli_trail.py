"""``serialpub trail``: the access trail from the command line (docs/deploy.md)."""

from __future__ import annotations

import asyncio
import datetime as dt
import time
import uuid
from typing import Annotated

import orjson
import typer

from app.services.access_trail import (
    CLI_ROLE,
    AccessAction,
    Event,
    TrailQuery,
    prune_expired,
    query,
    record_now,
)
from app.settings import get_settings

__all__ = ["trail"]


def _when(value: str | None, name: str) -> dt.datetime | None:
    if value is None:
        return None
    try:
        parsed = dt.datetime.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(f"not an ISO 8601 time: {value!r}", param_hint=name) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def trail(
    key: Annotated[str | None, typer.Option(help="A key's id")] = None,
    series: Annotated[str | None, typer.Option(help="A series' name")] = None,
    action: Annotated[
        AccessAction | None, typer.Option(help="What was done (release.read, ledger.read, …)")
    ] = None,
    since: Annotated[
        str | None, typer.Option(help="From this time on (ISO 8601; no zone: UTC)")
    ] = None,
    until: Annotated[str | None, typer.Option(help="Before this time")] = None,
    limit: Annotated[int, typer.Option(min=1, help="At most this many events")] = 10_000,
    prune: Annotated[
        bool,
        typer.Option(
            "--prune",
            help="Delete the events older than SERIALPUB_ACCESS_TRAIL_RETENTION_DAYS instead",
        ),
    ] = False,
) -> None:
    """Print the access trail as JSON lines, oldest first: who read or published what."""
    from app.cli_database import existing_database_url as _existing_database_url
    from app.db.engine import Database

    settings = get_settings()
    try:
        key_id = uuid.UUID(key) if key is not None else None
    except ValueError:
        raise typer.BadParameter(f"not a key id: {key!r}", param_hint="--key") from None
    wanted = TrailQuery(
        key_id=key_id,
        series=series,
        action=action.value if action else None,
        since=_when(since, "--since"),
        until=_when(until, "--until"),
        limit=limit,
    )
    db = Database(_existing_database_url(), pool_size=1)

    async def run() -> None:
        try:
            if prune:
                deleted = await prune_expired(db, settings.access_trail_retention_days)
                typer.echo(f"{deleted} event(s) deleted")
                return
            async with db.session() as session:
                for event in await query(session, wanted):
                    line = {
                        name: getattr(event, name)
                        for name in ("id", "at", "key_id", "role", "action", "series")
                    }
                    line |= {
                        "release_no": event.release_no,
                        "status": event.status,
                        "details": event.details,
                        "requests": event.requests,
                    }
                    typer.echo(orjson.dumps(line).decode())
                await record_now(
                    session,
                    Event(time.time(), None, CLI_ROLE, AccessAction.TRAIL_READ, series, None, 0),
                )
        finally:
            await db.dispose()

    asyncio.run(run())

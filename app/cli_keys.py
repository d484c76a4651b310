"""``serialpub create-key`` (docs/settings.md, "Command line")."""

from __future__ import annotations

import asyncio
from typing import Annotated

import sqlalchemy.exc
import typer

__all__ = ["create_key"]


def create_key(
    role: Annotated[str, typer.Option(help="admin, publisher, analyst or auditor")],
    series: Annotated[
        str | None,
        typer.Option(
            help="Publishers: the one series it posts to; analysts and auditors: the one series "
            "it reads (default: all)"
        ),
    ] = None,
    expires_in_days: Annotated[
        float | None,
        typer.Option(min=0.001, help="The key stops working this many days from now"),
    ] = None,
) -> None:
    """Create an API key and print it (once; only its hash is stored)."""
    import datetime as dt
    import time

    from app.cli_database import existing_database_url as _existing_database_url
    from app.db.engine import Database
    from app.errors import AppError
    from app.services.access_trail import CLI_ROLE, AccessAction, Event, record_now
    from app.services.auth import create_key as create

    db = Database(_existing_database_url(), pool_size=1)
    expires = (
        dt.datetime.now(dt.UTC) + dt.timedelta(days=expires_in_days) if expires_in_days else None
    )

    async def run() -> str:
        try:
            async with db.session() as session:
                key, plain = await create(session, role, series, expires_at=expires)
                await record_now(
                    session,
                    Event(
                        time.time(),
                        None,
                        CLI_ROLE,
                        AccessAction.KEY_CREATE,
                        series,
                        None,
                        0,
                        {"key": str(key.id)},
                    ),
                )
            until = f", expires {expires.isoformat()}" if expires else ""
            return (
                f"{plain}\n(id {key.id}, role {key.role}, series {key.series_name or '*'}{until})"
            )
        finally:
            await db.dispose()

    try:
        typer.echo(asyncio.run(run()))
    except AppError as exc:
        typer.echo(f"error: {exc.message}", err=True)
        raise typer.Exit(2) from None
    except sqlalchemy.exc.ProgrammingError:
        # The tables are missing: a database this service never migrated.
        typer.echo(
            "error: the database has no Serialpub tables; run 'serialpub migrate' (or "
            "'serialpub serve') with the same DATABASE_URL / SERIALPUB_DATA_DIR first",
            err=True,
        )
        raise typer.Exit(2) from None
    except (OSError, sqlalchemy.exc.OperationalError) as exc:
        typer.echo(
            f"error: cannot reach the database ({type(exc).__name__}); check DATABASE_URL", err=True
        )
        raise typer.Exit(2) from None

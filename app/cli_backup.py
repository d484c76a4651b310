"""``serialpub backup`` and ``serialpub restore`` (docs/deploy.md, "Backup and restore")."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Annotated

import sqlalchemy.exc
import typer

from app.services.access_trail import CLI_ROLE, AccessAction, Event, record_now
from app.services.backup import (
    BackupError,
    backup,
    load_identities,
    load_recipients,
    restore,
)
from app.settings import get_settings

__all__ = ["backup_command", "restore_command", "revisions"]


def revisions(root: Path) -> tuple[list[str], str]:
    """Every revision of the migrations under ``root`` and the head."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config(str(root / "alembic.ini"))
    config.set_main_option("script_location", str(root / "migrations"))
    script = ScriptDirectory.from_config(config)
    head = script.get_current_head()
    assert head is not None
    return [rev.revision for rev in script.walk_revisions()], head


def _record(url: str, action: AccessAction, details: dict[str, object]) -> None:
    """The operation in the database's access trail (no key: the command line's)."""
    from app.db.engine import Database

    async def run() -> None:
        db = Database(url, pool_size=1)
        try:
            async with db.session() as session:
                event = Event(time.time(), None, CLI_ROLE, action, None, None, 0, details)
                await record_now(session, event)
        finally:
            await db.dispose()

    try:
        asyncio.run(run())
    except sqlalchemy.exc.ProgrammingError:
        # A database of a version before the access trail (0016_access_trail): backing it
        # up before an upgrade is what an operator should do, so it is not refused.
        typer.echo(f"note: this database has no access trail yet; the {action} is not recorded")


def _fail(exc: BackupError) -> typer.Exit:
    typer.echo(f"error: {exc}", err=True)
    return typer.Exit(2)


def backup_command(
    out: Annotated[Path, typer.Argument(help="The archive to write (pg_dump custom format)")],
    recipient: Annotated[
        list[str] | None,
        typer.Option(
            "--recipient",
            "-r",
            help="Encrypt to this age recipient (age1…), or to those of a file (one a line); "
            "repeatable. The identity that decrypts it is never in the database",
        ),
    ] = None,
    force: Annotated[bool, typer.Option(help="Replace OUT when it exists")] = False,
) -> None:
    """Back up the service's whole database (releases, ledgers, secrets, keys, jobs, the
    access trail) with pg_dump, encrypted with age when given recipients."""
    from app.cli_database import existing_database_url as _existing_database_url

    if out.exists() and not force:
        typer.echo(f"error: {out} exists; choose another name or pass --force", err=True)
        raise typer.Exit(2)
    url = _existing_database_url()
    settings = get_settings()
    try:
        recipients = load_recipients(recipient or [])
        # Recorded first, so that the backup holds its own record.
        details = {"file": out.name, "encrypted": bool(recipients)}
        _record(url, AccessAction.DATABASE_BACKUP, details)
        done = backup(url, out, recipients, settings.pg_bin_dir)
    except BackupError as exc:
        raise _fail(exc) from None
    typer.echo(
        f"backed up to {done.path}: {done.size} bytes in {done.seconds:.1f} s "
        f"({'age-encrypted, ' if done.encrypted else ''}PostgreSQL {done.server_major}, "
        f"{done.tool.path} {done.tool.major})"
    )


def restore_command(
    archive: Annotated[
        Path, typer.Argument(help="A backup of 'serialpub backup' (or of pg_dump -Fc)")
    ],
    identity: Annotated[
        list[Path] | None,
        typer.Option(
            "--identity", "-i", help="The age identity file that decrypts the backup; repeatable"
        ),
    ] = None,
) -> None:
    """Restore a backup into the service's database, which must be empty (a new database or
    a new SERIALPUB_DATA_DIR), then migrate it to this version's schema."""
    from app.cli_database import alembic_root as _alembic_root
    from app.cli_database import database_url as _database_url
    from app.cli_database import migrate as _migrate

    url = _database_url()
    settings = get_settings()
    known, head = revisions(_alembic_root())
    try:
        done = restore(
            url,
            archive,
            known_revisions=known,
            head=head,
            migrate=_migrate,
            identities=load_identities(identity or []),
            pg_bin_dir=settings.pg_bin_dir,
        )
    except BackupError as exc:
        raise _fail(exc) from None
    migrated = (
        f"; migrated from {done.info.revision} to {done.migrated_to}" if done.migrated_to else ""
    )
    _record(
        url,
        AccessAction.DATABASE_RESTORE,
        {"file": archive.name, "revision": done.info.revision, "migrated_to": done.migrated_to},
    )
    typer.echo(
        f"restored {archive} in {done.seconds:.1f} s (schema {done.info.revision}, "
        f"pg_dump {done.info.dumped_by}, {done.tool.path} {done.tool.major}){migrated}"
    )

"""The database the command line works on, and its migrations (docs/settings.md, "Command
line")."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from app.observability import configure_logging
from app.settings import get_settings

__all__ = ["alembic_root", "database_url", "existing_database_url", "migrate"]


def database_url() -> str:
    """Resolve the database URL; export the embedded server's, so that uvicorn's worker
    processes join it.

    A ``DATABASE_URL`` the operator set is left as it is: with ``DATABASE_PASSWORD_FILE`` the
    resolved URL holds the password, and exporting it put the password in every child's
    environment and made the settings refuse to start (URL with a password *and* a password
    file). Children read both variables themselves and resolve the same URL.
    """
    from app.db.engine import resolve_database_url

    settings = get_settings()
    url = resolve_database_url(settings)
    if not settings.database_url:
        os.environ["DATABASE_URL"] = url
        get_settings.cache_clear()
    return url


def alembic_root() -> Path:
    """The repository (a checkout) or the working directory (the image copies them there)."""
    for root in (Path(__file__).resolve().parents[1], Path.cwd()):
        if (root / "alembic.ini").exists() and (root / "migrations").is_dir():
            return root
    raise typer.BadParameter("alembic.ini and migrations/ not found (run from the project)")


def migrate(url: str) -> None:
    from alembic import command
    from alembic.config import Config

    root = alembic_root()
    config = Config(str(root / "alembic.ini"))
    config.set_main_option("script_location", str(root / "migrations"))
    config.attributes["url"] = url
    # alembic.ini's own logging setup would print plain text: ours is configured instead.
    settings = get_settings()
    configure_logging(settings.log_level, settings.log_format)
    config.attributes["configure_logger"] = False
    command.upgrade(config, "head")


def existing_database_url() -> str:
    """The database ``serve`` uses, never a new empty one.

    With ``DATABASE_URL`` unset, ``serve`` keeps its embedded database in
    ``SERIALPUB_DATA_DIR`` (default ``./.serialpub``). Run from elsewhere (a subdirectory, a
    second terminal), look for ``.serialpub`` in the parent directories as git does; if there
    is none, say in one line what to set instead of creating an empty database.
    """
    settings = get_settings()
    if settings.database_url:
        return database_url()
    explicit = "SERIALPUB_DATA_DIR" in os.environ
    candidates = (
        [settings.data_dir]
        if explicit
        else [directory / ".serialpub" for directory in (Path.cwd(), *Path.cwd().parents)]
    )
    for data_dir in candidates:
        if (data_dir / "pg" / "PG_VERSION").exists():
            os.environ["SERIALPUB_DATA_DIR"] = str(data_dir.resolve())
            get_settings.cache_clear()
            return database_url()
    where = settings.data_dir.resolve() if explicit else f"{Path.cwd()} or its parents"
    typer.echo(
        f"error: no Serialpub database in {where}: run this where 'serialpub serve' "
        "runs, or set SERIALPUB_DATA_DIR (its data directory) or DATABASE_URL",
        err=True,
    )
    raise typer.Exit(2)

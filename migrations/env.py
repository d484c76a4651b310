"""Alembic environment: runs migrations synchronously over psycopg 3."""

from __future__ import annotations

from logging.config import fileConfig

from alembic import context
from sqlalchemy import create_engine, pool, text

from app.db.base import Base
from app.db.engine import resolve_database_url
from app.db.locks import MIGRATION_LOCK
from app.db.models import __all__ as _models  # noqa: F401  (registers every table)
from app.settings import get_settings

config = context.config
if config.config_file_name is not None and config.attributes.get("configure_logger", True):
    fileConfig(config.config_file_name, disable_existing_loggers=False)

target_metadata = Base.metadata


def _include_object(
    obj: object, name: str | None, type_: str, reflected: bool, compare_to: object
) -> bool:
    """Leave procrastinate's tables to its own schema (revision 0002)."""
    table = getattr(obj, "table", obj) if type_ in ("index", "column") else obj
    table_name = getattr(table, "name", name) or ""
    return not str(table_name).startswith("procrastinate_")


def _url() -> str:
    url = config.attributes.get("url") or config.get_main_option("sqlalchemy.url")
    return str(url) if url else resolve_database_url(get_settings())


def run_migrations_offline() -> None:
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    engine = create_engine(_url(), poolclass=pool.NullPool)
    with engine.connect() as connection:
        # Replicas starting together (compose --scale, rolling updates) would race to create
        # the same tables: the session-level advisory lock makes them take turns. It outlives
        # the commits below and is released when this connection closes, even on error.
        connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": MIGRATION_LOCK})
        connection.commit()
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            include_object=_include_object,
        )
        with context.begin_transaction():
            context.run_migrations()
        connection.commit()
        connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": MIGRATION_LOCK})
        connection.commit()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()

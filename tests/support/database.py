"""A throw-away PostgreSQL database for the service tests.

``TEST_DATABASE_URL`` (a server the tests may create databases on) when set, else an embedded
PostgreSQL in a temporary directory. Each test session creates a fresh database, migrates it
with ``alembic upgrade head`` and drops it at the end.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
from alembic import command
from alembic.config import Config
from sqlalchemy.engine import make_url

from app.db.embedded import libpq_url, sqlalchemy_url, start_embedded

ROOT = Path(__file__).resolve().parents[2]

#: Tables emptied between tests, children first. procrastinate's jobs go too, but not its
#: workers: the running in-process worker must keep its registration.
TABLES = (
    "access_events",
    "attack_reports",
    "audit_backgrounds",
    "rendered_chunks",
    "rendered_documents",
    "published_rows",
    "cluster_ledgers",
    "clusters",
    "release_ledgers",
    "releases",
    "wong_statistics",
    "idempotency_keys",
    "job_inputs",
    "jobs",
    "series",
    "api_keys",
    "procrastinate_events",
    "procrastinate_periodic_defers",
    "procrastinate_jobs",
)


def server_url() -> str:
    """A SQLAlchemy URL to a server where databases may be created."""
    configured = os.environ.get("TEST_DATABASE_URL")
    if configured:
        return sqlalchemy_url(configured)
    data_dir = Path(tempfile.mkdtemp(prefix="serialpub-test-"))
    return start_embedded(data_dir, cleanup="delete")


def migrate(url: str) -> None:
    config = Config(str(ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(ROOT / "migrations"))
    config.attributes["url"] = url
    config.attributes["configure_logger"] = False
    command.upgrade(config, "head")


@contextmanager
def fresh_database() -> Iterator[str]:
    """Create, migrate, yield and finally drop a database; yields its SQLAlchemy URL."""
    server = make_url(server_url())
    name = f"serialpub_test_{uuid.uuid4().hex[:12]}"
    admin = libpq_url(server.render_as_string(hide_password=False))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
    url = server.set(database=name).render_as_string(hide_password=False)
    try:
        migrate(url)
        yield url
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')  # type: ignore[arg-type]


def truncate_all(url: str) -> None:
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        conn.execute(f"TRUNCATE {', '.join(TABLES)} CASCADE")  # type: ignore[arg-type]

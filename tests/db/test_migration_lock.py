"""Migrations take turns: replicas that start together do not race to create the schema."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid

import psycopg
import pytest
from sqlalchemy.engine import make_url

from app.db.embedded import libpq_url
from app.db.locks import MIGRATION_LOCK
from tests.support.database import ROOT

pytestmark = [pytest.mark.db, pytest.mark.slow]


def _migrate(url: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "DATABASE_URL": url, "SERIALPUB_LOG_LEVEL": "WARNING"}
    return subprocess.Popen(
        [sys.executable, "-m", "app", "migrate"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _has_schema(url: str) -> bool:
    with psycopg.connect(libpq_url(url)) as conn:
        row = conn.execute("SELECT to_regclass('alembic_version') IS NOT NULL").fetchone()
    return bool(row and row[0])


def test_replicas_migrate_one_after_the_other(database_url: str) -> None:
    server = make_url(database_url)  # the tests' server, another database
    name = f"serialpub_lock_{uuid.uuid4().hex[:12]}"
    admin = libpq_url(server.render_as_string(hide_password=False))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
    url = server.set(database=name).render_as_string(hide_password=False)
    try:
        with psycopg.connect(libpq_url(url), autocommit=True) as holder:
            # Another replica is migrating: these two wait for it, then for each other.
            holder.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
            replicas = [_migrate(url), _migrate(url)]
            time.sleep(4)
            assert [r.poll() for r in replicas] == [None, None]
            assert not _has_schema(url)
            holder.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))
        for replica in replicas:
            _, err = replica.communicate(timeout=120)
            assert replica.returncode == 0, err.decode()
        assert _has_schema(url)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')  # type: ignore[arg-type]

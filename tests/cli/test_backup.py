"""``serialpub backup`` and ``serialpub restore``: the restore drill of docs/deploy.md, end to
end, and every restore that must be refused."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pyrage
import pytest
from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy.engine import make_url

from app.db.embedded import libpq_url
from app.services.backup import BackupError, choose_tool
from tests.support.database import ROOT, fresh_database, server_url

pytestmark = [pytest.mark.slow, pytest.mark.db]

ADMIN = {"Authorization": "Bearer test-admin-token"}
EXAMPLES = ROOT / "examples"
SERIES = "prison-health"
#: The README's series, with a publisher seed: the fourth release must come out the same in
#: the original and the restored database, and a seed is what makes it comparable.
PARAMS = {"r_th": 2, "cluster_size": 5, "seed": 41}
PRIVATE = ["HIV", "cancer", "herpes"]
SNAPSHOTS = ["prison-2022.dat", "prison-2023.dat", "prison-2024.dat", "prison-2022.dat"]


@contextmanager
def empty_database() -> Iterator[str]:
    """A database with nothing in it (not migrated), dropped at the end."""
    server = make_url(server_url())
    name = f"serialpub_restore_{uuid.uuid4().hex[:12]}"
    admin = libpq_url(server.render_as_string(hide_password=False))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
    try:
        yield server.set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')  # type: ignore[arg-type]


def serialpub(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SERIALPUB_", "DATABASE_"))}
    env |= {"DATABASE_URL": url, "SERIALPUB_LOG_LEVEL": "WARNING", "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@asynccontextmanager
async def service(url: str) -> AsyncIterator[httpx.AsyncClient]:
    """The API (and its in-process worker) on ``url``, with no process cache carried over
    from another database. No SERIALPUB_SECRET: the pseudonyms' key is the database's own."""
    from app.api.main import create_app
    from app.db.repositories.release_load import RELEASE_CACHE
    from app.services.auth import clear_reader_cache
    from app.services.renderings import clear_render_cache
    from app.services.risk import clear_risk_cache
    from app.settings import Settings

    RELEASE_CACHE.clear()
    clear_render_cache()
    clear_risk_cache()
    clear_reader_cache()
    settings = Settings(
        DATABASE_URL=url,
        SERIALPUB_ENV="test",
        SERIALPUB_ADMIN_TOKEN="test-admin-token",
        SERIALPUB_WAIT_TIMEOUT=120,
        SERIALPUB_DB_POOL_SIZE=5,
    )
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://test", timeout=120
        ) as client:
            yield client


async def publish(client: httpx.AsyncClient, key: str, number: int) -> None:
    snapshot = (EXAMPLES / SNAPSHOTS[number - 1]).read_bytes()
    response = await client.post(
        f"/v1/series/{SERIES}/releases?wait=true&label=year-{number}",
        content=snapshot,
        headers={
            "Authorization": f"Bearer {key}",
            "Content-Type": "text/plain",
            "Idempotency-Key": f"upload-{number}",
        },
    )
    assert response.status_code == 201, response.text


def snapshot(url: str) -> dict[str, list[str]]:
    """Every row of every table of the database, as text, sorted."""
    with psycopg.connect(libpq_url(url)) as conn:
        tables = [
            name
            for (name,) in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
            ).fetchall()
        ]
        return {
            table: sorted(
                row
                for (row,) in conn.execute(f"SELECT t::text FROM {table} t").fetchall()  # type: ignore[arg-type]
            )
            for table in tables
        }


async def fourth_release(url: str, publisher: str) -> tuple[bytes, Any]:
    async with service(url) as client:
        await publish(client, publisher, 4)
        release = await client.get(f"/v1/series/{SERIES}/releases/4", headers=ADMIN)
        ledger = await client.get(f"/v1/series/{SERIES}/releases/4/ledger", headers=ADMIN)
    assert release.status_code == 200 and ledger.status_code == 200
    return release.content, ledger.json()


@pytest.mark.anyio
async def test_the_restore_drill(tmp_path: Path) -> None:
    """Publish three releases, back up (encrypted), restore into an empty database: every
    row comes back, the restored series verifies, and the fourth release published on it
    equals the one the original database publishes."""
    identity = pyrage.x25519.Identity.generate()
    (tmp_path / "backup-key.txt").write_text(f"{identity}\n")
    archive = tmp_path / "serialpub.dump.age"
    with fresh_database() as original:
        async with service(original) as client:
            created = await client.post(
                "/v1/series",
                json={
                    "name": SERIES,
                    "private_terms": ["HIV", "cancer", "herpes"],
                    "params": PARAMS,
                },
                headers=ADMIN,
            )
            assert created.status_code == 201, created.text
            keys = {}
            for role, expiry in (("publisher", None), ("analyst", "2099-01-01T00:00:00Z")):
                made = await client.post(
                    "/v1/keys",
                    json={"role": role, "series": SERIES, "expires_at": expiry},
                    headers=ADMIN,
                )
                keys[role] = made.json()["key"]
            for number in (1, 2, 3):
                await publish(client, keys["publisher"], number)
            read = await client.get(
                f"/v1/series/{SERIES}/releases/3",
                headers={"Authorization": f"Bearer {keys['analyst']}"},
            )
            assert read.status_code == 200
        backed_up = serialpub(original, "backup", str(archive), "-r", str(identity.to_public()))
        assert backed_up.returncode == 0, backed_up.stderr
        assert archive.read_bytes().startswith(b"age-encryption.org/v1\n")
        assert stat.S_IMODE(archive.stat().st_mode) == 0o600
        before = snapshot(original)
        with empty_database() as restored:
            done = serialpub(
                restored, "restore", str(archive), "-i", str(tmp_path / "backup-key.txt")
            )
            assert done.returncode == 0, done.stderr
            after = snapshot(restored)
            trail_before = before.pop("access_events")
            trail_after = after.pop("access_events")
            assert after == before
            # The keys, jobs and idempotency records came back as they were.
            assert len(after["api_keys"]) == 3 and len(after["idempotency_keys"]) == 3
            assert len(after["jobs"]) == 3 and after["job_inputs"] == []
            # The trail too, plus the restore itself.
            added = [row for row in trail_after if row not in trail_before]
            assert len(added) == 1 and "database.restore" in added[0]
            assert any("database.backup" in row for row in trail_before)

            async with service(restored) as client:
                directory = tmp_path / "public"
                directory.mkdir()
                for number in (1, 2, 3):
                    got = await client.get(f"/v1/series/{SERIES}/releases/{number}", headers=ADMIN)
                    (directory / f"release-{number:03d}.json").write_bytes(got.content)
            verified = serialpub(restored, "verify", str(directory))
            assert verified.returncode == 0, verified.stdout + verified.stderr

            restored_fourth = await fourth_release(restored, keys["publisher"])
        original_fourth = await fourth_release(original, keys["publisher"])
    assert json.loads(restored_fourth[0])["release_no"] == 4
    assert restored_fourth[0] == original_fourth[0]
    assert restored_fourth[1] == original_fourth[1]


def _head() -> str:
    """The newest revision this version of Serialpub migrates to."""
    head = ScriptDirectory.from_config(_config("")).get_current_head()
    assert head is not None
    return head


def _config(url: str) -> Config:
    config = Config(str(ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(ROOT / "migrations"))
    config.attributes["url"] = url
    config.attributes["configure_logger"] = False
    return config


def _head() -> str:
    """The newest migration (a constant here went stale with each new one)."""
    return str(ScriptDirectory.from_config(_config("")).get_current_head())


def test_a_backup_of_an_older_schema_is_migrated_after_the_restore(tmp_path: Path) -> None:
    archive = tmp_path / "old.dump"
    with fresh_database() as url:
        command.downgrade(_config(url), "0015_withdrawals")
        with psycopg.connect(libpq_url(url), autocommit=True) as conn:
            conn.execute(
                "INSERT INTO api_keys (id, key_hash, role) VALUES (%s, %s, 'auditor')",
                (uuid.uuid4(), "ab" * 32),
            )
        done = serialpub(url, "backup", str(archive))
        assert done.returncode == 0, done.stderr
    with empty_database() as target:
        restored = serialpub(target, "restore", str(archive))
        assert restored.returncode == 0, restored.stderr
        assert f"migrated from 0015_withdrawals to {_head()}" in restored.stdout
        with psycopg.connect(libpq_url(target)) as conn:
            version = conn.execute("SELECT version_num FROM alembic_version").fetchone()
            keys = conn.execute("SELECT role, expires_at FROM api_keys").fetchall()
    assert version == (_head(),)
    assert keys == [("auditor", None)]


def test_a_backup_of_a_newer_schema_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    archive = tmp_path / "new.dump"
    with fresh_database() as url:
        with psycopg.connect(libpq_url(url), autocommit=True) as conn:
            conn.execute("UPDATE alembic_version SET version_num = '0099_from_the_future'")
        assert serialpub(url, "backup", str(archive)).returncode == 0
    with empty_database() as target:
        refused = serialpub(target, "restore", str(archive))
        assert refused.returncode == 2
        assert refused.stderr.strip() == (
            "error: the backup's schema is at revision 0099_from_the_future, which this version "
            f"of Serialpub does not know (its newest is {_head()}): restore it "
            "with the version that made it, or a newer one"
        )
        with psycopg.connect(libpq_url(target)) as conn:
            tables = conn.execute(
                "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"
            ).fetchone()
    assert tables == (0,)


def test_restores_that_cannot_succeed_say_why(tmp_path: Path) -> None:
    archive = tmp_path / "serialpub.dump"
    identity = pyrage.x25519.Identity.generate()
    other = pyrage.x25519.Identity.generate()
    (tmp_path / "other.txt").write_text(f"{other}\n")
    with fresh_database() as url:
        assert (
            serialpub(url, "backup", str(archive), "-r", str(identity.to_public())).returncode == 0
        )
        exists = serialpub(url, "backup", str(archive))
        assert exists.returncode == 2 and "exists" in exists.stderr
        # Into a database that holds tables (here: the original itself).
        full = serialpub(url, "restore", str(archive), "-i", str(tmp_path / "other.txt"))
        assert full.returncode == 2
    with empty_database() as target:
        missing_key = serialpub(target, "restore", str(archive))
        assert "is encrypted (age): give its identity with --identity FILE" in missing_key.stderr
        wrong_key = serialpub(target, "restore", str(archive), "-i", str(tmp_path / "other.txt"))
        assert "no identity given matches its recipients" in wrong_key.stderr
        not_a_dump = tmp_path / "notes.txt"
        not_a_dump.write_text("hello\n")
        garbage = serialpub(target, "restore", str(not_a_dump))
        assert "is not a pg_dump archive" in garbage.stderr
        assert all(r.returncode == 2 for r in (missing_key, wrong_key, garbage))


def test_a_restore_into_a_database_with_tables_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "serialpub.dump"
    with fresh_database() as url:
        assert serialpub(url, "backup", str(archive)).returncode == 0
        refused = serialpub(url, "restore", str(archive))
    assert refused.returncode == 2
    assert "the target database is not empty" in refused.stderr


def _fake_tool(directory: Path, name: str, major: int) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(f"#!/bin/sh\necho '{name} (PostgreSQL) {major}.3'\n")
    path.chmod(0o755)


def test_the_tools_nearest_the_server_are_chosen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pg_dump refuses a newer server and pg_restore a newer archive: the oldest tool at
    least as new as both is taken, and none answers with what to install."""
    monkeypatch.setenv("PATH", os.pathsep.join(str(tmp_path / d) for d in ("a", "b", "c")))
    monkeypatch.setattr(
        "app.services.backup._candidate_dirs",
        lambda configured: iter(
            [*([configured] if configured else []), tmp_path / "a", tmp_path / "b", tmp_path / "c"]
        ),
    )
    _fake_tool(tmp_path / "a", "pg_dump", 18)
    _fake_tool(tmp_path / "b", "pg_dump", 15)
    _fake_tool(tmp_path / "c", "pg_dump", 16)
    assert choose_tool("pg_dump", 15).major == 15
    assert choose_tool("pg_dump", 16).path == tmp_path / "c" / "pg_dump"
    assert choose_tool("pg_dump", 17).major == 18
    with pytest.raises(BackupError) as refused:
        choose_tool("pg_dump", 19)
    assert "pg_dump of PostgreSQL 19 or newer is needed" in str(refused.value)
    assert "postgresql-client-19" in str(refused.value) and "SERIALPUB_PG_BIN_DIR" in str(
        refused.value
    )

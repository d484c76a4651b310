"""The migrations build exactly the models' schema (``alembic check``), and go down and up."""

from __future__ import annotations

import pytest
from alembic import command
from alembic.config import Config

from tests.support.database import ROOT, fresh_database

pytestmark = [pytest.mark.db]


def _config(url: str) -> Config:
    config = Config(str(ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(ROOT / "migrations"))
    config.attributes["url"] = url
    config.attributes["configure_logger"] = False
    return config


def test_models_match_migrations(database_url: str) -> None:
    command.check(_config(database_url))


def test_downgrade_and_upgrade_again() -> None:
    with fresh_database() as url:
        command.downgrade(_config(url), "base")
        command.upgrade(_config(url), "head")
        command.check(_config(url))


def test_0010_counts_the_records_of_stored_disassociation_releases() -> None:
    """Releases stored before 0010 said 0 rows and 0 clusters; their layout knows better."""
    import psycopg
    from psycopg.types.json import Jsonb

    from app.db.embedded import libpq_url

    with fresh_database() as url:
        command.downgrade(_config(url), "0009_attacks")
        with psycopg.connect(libpq_url(url), autocommit=True) as conn:
            series = conn.execute(
                "INSERT INTO series (name, method, private_terms, params) "
                "VALUES ('s', 'disassociation', '{}', '{}') RETURNING id"
            ).fetchone()
            assert series is not None
            ids = [
                conn.execute(
                    "INSERT INTO releases (series_id, release_no, method, params, private_terms, "
                    "n_rows, n_clusters, population_rates, global_bag, global_counterfeits) "
                    "VALUES (%s, %s, %s, '{}', '{}', %s, 0, '{}', '{}', 0) RETURNING id",
                    (series[0], number, method, rows),
                ).fetchone()[0]  # type: ignore[index]
                for number, method, rows in ((1, "disassociation", 0), (2, "sanony", 6))
            ]
            for position, size in enumerate((3, 4)):
                conn.execute(
                    "INSERT INTO disassociation_parts VALUES (%s, 'cluster', %s, %s)",
                    (ids[0], position, Jsonb({"id": f"P{position + 1}", "size": size})),
                )
            conn.execute(
                "INSERT INTO disassociation_parts VALUES (%s, 'header', 0, %s)",
                (ids[0], Jsonb({"k": 2, "m": 2})),
            )
        command.upgrade(_config(url), "head")
        with psycopg.connect(libpq_url(url)) as conn:
            counts = conn.execute(
                "SELECT release_no, n_rows, n_clusters FROM releases ORDER BY release_no"
            ).fetchall()
        assert counts == [(1, 7, 2), (2, 6, 0)]


def test_0012_takes_the_seed_out_of_public_params_into_the_ledger() -> None:
    """Releases stored before 0012 printed their seed (0 by default): it goes to the ledger,
    their public params say only ``publisher_seed``, and their renderings are dropped so that
    they are rendered again without it."""
    import psycopg

    from app.db.embedded import libpq_url

    with fresh_database() as url:
        command.downgrade(_config(url), "0010_audit")
        with psycopg.connect(libpq_url(url), autocommit=True) as conn:
            series = conn.execute(
                "INSERT INTO series (name, method, private_terms, params) "
                "VALUES ('s', 'sanony', '{}', '{}') RETURNING id"
            ).fetchone()
            assert series is not None
            ids = []
            for number, params in ((1, '{"r_th": 2, "seed": 918273645}'), (2, '{"r_th": 2}')):
                row = conn.execute(
                    "INSERT INTO releases (series_id, release_no, method, params, "
                    "private_terms, n_rows, n_clusters, population_rates, global_bag, "
                    "global_counterfeits) VALUES (%s, %s, 'sanony', %s, '{}', 0, 0, '{}', "
                    "'{}', 0) RETURNING id",
                    (series[0], number, params),
                ).fetchone()
                assert row is not None
                ids.append(row[0])
                conn.execute(
                    "INSERT INTO release_ledgers (release_id, global_bag_counterfeits,"
                    " suppressed) VALUES (%s, '{}', '{}')",
                    (row[0],),
                )
                conn.execute(
                    "INSERT INTO rendered_documents (release_id, key, media_type, etag, "
                    "identity_size, gzip_size, chunk_bytes, n_chunks, created_at) VALUES "
                    "(%s, 'release.json', 'application/json', 'x', 0, 0, 1, 0, now())",
                    (row[0],),
                )
        command.upgrade(_config(url), "head")
        with psycopg.connect(libpq_url(url)) as conn:
            rows = conn.execute(
                "SELECT r.release_no, r.params, l.randomness, (SELECT count(*) FROM "
                "rendered_documents d WHERE d.release_id = r.id) FROM releases r "
                "JOIN release_ledgers l ON l.release_id = r.id ORDER BY r.release_no"
            ).fetchall()
        assert rows == [
            (
                1,
                {"r_th": 2, "randomness": "publisher_seed"},
                {"source": "publisher_seed", "seed": 918273645},
                0,
            ),
            (2, {"r_th": 2}, {}, 1),
        ]


def test_0011_attributes_idempotency_keys_to_their_jobs_api_key() -> None:
    import uuid

    import psycopg

    from app.db.embedded import libpq_url

    with fresh_database() as url:
        command.downgrade(_config(url), "0010_audit")
        key_id, job_id, orphan_job = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
        with psycopg.connect(libpq_url(url), autocommit=True) as conn:
            series = conn.execute(
                "INSERT INTO series (name, method, private_terms, params) "
                "VALUES ('s', 'sanony', '{}', '{}') RETURNING id"
            ).fetchone()
            assert series is not None
            conn.execute(
                "INSERT INTO api_keys (id, key_hash, role, created_at) "
                "VALUES (%s, 'h', 'publisher', now())",
                (key_id,),
            )
            for job, owner in ((job_id, key_id), (orphan_job, None)):
                conn.execute(
                    "INSERT INTO jobs (id, series_id, api_key_id, status, progress, "
                    "n_transactions, attempts, extra_private_terms, phase_seconds, "
                    "created_at) VALUES (%s, %s, %s, 'succeeded', 1, 1, 1, '{}', '{}', now())",
                    (job, series[0], owner),
                )
            for name, job in (("mine", job_id), ("orphan", orphan_job)):
                conn.execute(
                    "INSERT INTO idempotency_keys (key, series_id, body_hash, job_id, "
                    "created_at) VALUES (%s, %s, 'b', %s, now())",
                    (name, series[0], job),
                )
        command.upgrade(_config(url), "head")
        with psycopg.connect(libpq_url(url)) as conn:
            rows = conn.execute("SELECT api_key_id, key FROM idempotency_keys").fetchall()
        assert rows == [(key_id, "mine")]


def test_0016_deletes_the_uploads_of_finished_jobs() -> None:
    """A finished job's input is not kept (docs/deploy.md, "What is kept of a snapshot");
    one left by an earlier version goes, a queued job's stays."""
    import uuid

    import psycopg

    from app.db.embedded import libpq_url

    with fresh_database() as url:
        command.downgrade(_config(url), "0015_withdrawals")
        with psycopg.connect(libpq_url(url), autocommit=True) as conn:
            series = conn.execute(
                "INSERT INTO series (name, method, private_terms, params) "
                "VALUES ('s', 'sanony', '{HIV}', '{}') RETURNING id"
            ).fetchone()
            assert series is not None
            jobs = {status: uuid.uuid4() for status in ("succeeded", "failed", "queued")}
            for status, job_id in jobs.items():
                conn.execute(
                    "INSERT INTO jobs (id, series_id, status, progress, extra_private_terms, "
                    "n_transactions, attempts, phase_seconds) "
                    "VALUES (%s, %s, %s, 0, '{}', 1, 0, '{}')",
                    (job_id, series[0], status),
                )
                conn.execute("INSERT INTO job_inputs VALUES (%s, 'x')", (job_id,))
        command.upgrade(_config(url), "0016_access_trail")
        with psycopg.connect(libpq_url(url)) as conn:
            left = conn.execute("SELECT job_id FROM job_inputs").fetchall()
    assert left == [(jobs["queued"],)]

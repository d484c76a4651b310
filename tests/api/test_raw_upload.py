"""What is kept of a snapshot (docs/deploy.md, "What is kept of a snapshot"): its raw upload
lives only until its job ends, published, failed or a dry run."""

from __future__ import annotations

import gzip
import zlib
from typing import Any

import httpx
import psycopg
import pytest

from app.core.errors import PublicationFailed
from app.db.embedded import libpq_url
from app.io.compact import MAGIC
from tests.api.conftest import create_key, create_series, wait_job

pytestmark = [pytest.mark.anyio, pytest.mark.db]

URL = "/v1/series/prison-health/releases"
#: Lines no release prints as they are: each holds a private term beside public ones, and
#: a pseudonym the service keys before it stores anything.
LINES = [
    {"terms": ["zqx-alpha", "zqx-beta", "HIV"], "individual": "patient-zqx-0001"},
    {"terms": ["zqx-alpha", "zqx-gamma", "cancer"], "individual": "patient-zqx-0002"},
    {"terms": ["zqx-beta", "zqx-gamma"], "individual": "patient-zqx-0003"},
    {"terms": ["zqx-alpha", "zqx-beta", "zqx-gamma", "herpes"], "individual": "patient-zqx-0004"},
] * 3


def _inflated(value: bytes) -> bytes:
    """``value``, gunzipped or inflated when it is compressed that way."""
    for inflate in (gzip.decompress, zlib.decompress):
        try:
            return inflate(value)
        except (OSError, zlib.error, EOFError):
            continue
    return value


def leftovers(database_url: str) -> list[str]:
    """Where a raw upload is still held: a row of ``job_inputs``, a compact payload in any
    binary column of any table, a pseudonym or a raw line in any row as text."""
    found: list[str] = []
    raw_lines = [" ".join(line["terms"]) for line in LINES]
    pseudonyms = [line["individual"] for line in LINES]
    with psycopg.connect(libpq_url(database_url)) as conn:
        count = conn.execute("SELECT count(*) FROM job_inputs").fetchone()
        if count != (0,):
            found.append(f"job_inputs: {count}")
        columns = conn.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = 'public'"
        ).fetchall()
        for table, column, data_type in columns:
            if data_type != "bytea":
                continue
            for (value,) in conn.execute(f'SELECT "{column}" FROM "{table}"').fetchall():  # type: ignore[arg-type]
                data = _inflated(bytes(value))
                if data.startswith(MAGIC) or bytes(value).startswith(MAGIC):
                    found.append(f"{table}.{column}: a compact upload")
                for text in (*raw_lines, *pseudonyms):
                    if text.encode() in data:
                        found.append(f"{table}.{column}: {text}")
        tables = {table for table, _, _ in columns}
        for table in sorted(tables):
            rows = conn.execute(f'SELECT t::text FROM "{table}" t').fetchall()  # type: ignore[arg-type]
            for (row,) in rows:
                for text in (*raw_lines, *pseudonyms):
                    if text in row:
                        found.append(f"{table}: {text}")
    return found


def _body() -> dict[str, Any]:
    return {"label": "2025", "transactions": LINES}


async def _series(client: httpx.AsyncClient) -> dict[str, str]:
    await create_series(
        client, params={"r_th": 2, "cluster_size": 2, "seed": 5}, private_terms=None
    )
    return await create_key(client, "publisher", "prison-health")


async def test_no_raw_line_is_left_after_a_published_job(
    client: httpx.AsyncClient, database_url: str
) -> None:
    publisher = await _series(client)
    posted = await client.post(URL, json=_body(), headers=publisher)
    assert posted.status_code == 202, posted.text
    # While it waits for its worker, its upload is kept (that is where it waits).
    job = await wait_job(client, posted.json()["id"], publisher)
    assert job["status"] == "succeeded", job
    assert leftovers(database_url) == []


async def test_no_raw_line_is_left_after_a_failed_job(
    client: httpx.AsyncClient,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    forked_compute: None,
) -> None:
    from app.core import pipeline

    publisher = await _series(client)

    def failing(*args: object, **kwargs: object) -> object:
        raise PublicationFailed("guard reached", {"rounds": 200})

    monkeypatch.setattr(pipeline, "publish", failing)
    response = await client.post(f"{URL}?wait=true", json=_body(), headers=publisher)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "publication_failed"
    assert leftovers(database_url) == []


async def test_no_raw_line_is_left_after_a_dry_run(
    client: httpx.AsyncClient, database_url: str
) -> None:
    publisher = await _series(client)
    response = await client.post(f"{URL}?wait=true&dry_run=true", json=_body(), headers=publisher)
    assert response.status_code == 200, response.text
    assert leftovers(database_url) == []


async def test_the_check_finds_an_upload_still_held(
    client: httpx.AsyncClient, database_url: str
) -> None:
    """The scan sees an upload that is still held (here: left behind by a job that ended)."""
    import uuid

    await _series(client)
    with psycopg.connect(libpq_url(database_url), autocommit=True) as conn:
        series = conn.execute("SELECT id FROM series").fetchone()
        assert series is not None
        job_id = uuid.uuid4()
        conn.execute(
            "INSERT INTO jobs (id, series_id, status, progress, extra_private_terms, "
            "n_transactions, attempts, phase_seconds) "
            "VALUES (%s, %s, 'failed', 0, '{}', 1, 0, '{}')",
            (job_id, series[0]),
        )
        conn.execute("INSERT INTO job_inputs VALUES (%s, %s)", (job_id, MAGIC + bytes(8)))
    found = leftovers(database_url)
    assert "job_inputs: (1,)" in found
    assert "job_inputs.payload: a compact upload" in found

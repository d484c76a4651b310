"""PostgreSQL out of disk space: the answer names the cause (507 ``storage_full``), nothing is
stored, ``/readyz`` degrades and the metrics count it.

The full disk is PostgreSQL's own error: a trigger raises SQLSTATE 53100 (``disk_full``, what
the server raises when it cannot extend a file) on the table written, so the service meets
the same exception, from the server, as on a full disk, without filling one on a shared
machine.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import httpx
import psycopg
import pytest

from app.db.embedded import libpq_url
from tests.faults.conftest import ADMIN, TEXT, corpus, release_numbers, setup_series

pytestmark = [pytest.mark.anyio, pytest.mark.db]

URL = "/v1/series/prison-health/releases"


@pytest.fixture
async def full_disk(fault_url: str) -> AsyncIterator[Callable[[str], object]]:
    """``full_disk(table)``: every insert into ``table`` fails as on a full disk, until the
    test ends."""
    tables: list[str] = []

    async def on(table: str) -> None:
        async with await psycopg.AsyncConnection.connect(
            libpq_url(fault_url), autocommit=True
        ) as conn:
            await conn.execute(
                "CREATE OR REPLACE FUNCTION test_disk_full() RETURNS trigger LANGUAGE plpgsql "
                "AS $$ BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' "
                "USING ERRCODE = 'disk_full'; END $$"
            )
            await conn.execute(
                f"CREATE TRIGGER test_disk_full BEFORE INSERT ON {table} "  # type: ignore[arg-type]
                "FOR EACH ROW EXECUTE FUNCTION test_disk_full()"
            )
        tables.append(table)

    async def off() -> None:
        async with await psycopg.AsyncConnection.connect(
            libpq_url(fault_url), autocommit=True
        ) as conn:
            for table in tables:
                await conn.execute(f"DROP TRIGGER IF EXISTS test_disk_full ON {table}")  # type: ignore[arg-type]
        tables.clear()

    on.off = off  # type: ignore[attr-defined]
    try:
        yield on
    finally:
        await off()


async def test_a_release_that_cannot_be_stored_answers_507_and_readyz_degrades(
    client: httpx.AsyncClient, full_disk: Callable[[str], object], fault_url: str
) -> None:
    """Before, the job failed ``internal_error`` ("the publication failed unexpectedly"), the
    wait=true post answered 422, and nothing in /readyz or /metrics said why."""
    publisher = await setup_series(client)
    await full_disk("releases")  # type: ignore[misc]
    response = await client.post(
        f"{URL}?wait=true", content=corpus(1), headers={**publisher, **TEXT}
    )
    assert response.status_code == 507, response.text
    error = response.json()["error"]
    assert error["code"] == "storage_full" and "no space left" in error["message"]
    assert response.headers["Retry-After"]
    job = (await client.get(f"/v1/jobs/{error['details']['job']}", headers=ADMIN)).json()
    assert job["status"] == "failed" and job["error"]["code"] == "storage_full"
    assert await release_numbers(client) == []
    async with await psycopg.AsyncConnection.connect(libpq_url(fault_url)) as conn:
        for table in ("releases", "clusters", "published_rows", "rendered_documents"):
            cur = await conn.execute(f"SELECT count(*) FROM {table}")  # type: ignore[arg-type]
            assert await cur.fetchone() == (0,), table
    ready = await client.get("/readyz")
    assert ready.status_code == 503 and ready.json()["error"]["code"] == "storage_full"
    metrics = (await client.get("/metrics")).text
    assert 'serialpub_storage_full_total{what="publication store"} 1.0' in metrics
    # Space added: the next post publishes, readiness comes back.
    await full_disk.off()  # type: ignore[attr-defined]
    again = await client.post(f"{URL}?wait=true", content=corpus(1), headers={**publisher, **TEXT})
    assert again.status_code == 201, again.text
    assert (await client.get("/readyz")).status_code == 200
    assert await release_numbers(client) == [1]


async def test_a_post_that_cannot_be_stored_answers_507(
    client: httpx.AsyncClient, full_disk: Callable[[str], object]
) -> None:
    """The upload's job and input are written in the request: a full disk there was a bare
    500."""
    publisher = await setup_series(client)
    await full_disk("job_inputs")  # type: ignore[misc]
    response = await client.post(URL, content=corpus(1), headers={**publisher, **TEXT})
    assert response.status_code == 507, response.text
    assert response.json()["error"]["code"] == "storage_full"
    jobs = await client.get("/v1/series/prison-health", headers=ADMIN)
    assert jobs.status_code == 200
    ready = await client.get("/readyz")
    assert ready.status_code == 503 and ready.json()["error"]["details"]["what"] == "request"

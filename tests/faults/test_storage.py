"""PostgreSQL out of disk space: the answer names the cause (507 ``storage_full``), nothing is
stored, ``/readyz`` degrades and the metrics count it.

The full disk is PostgreSQL's own error: a trigger raises SQLSTATE 53100 (``disk_full``, what
the server raises when it cannot extend a file) on the table written, so the service meets
the same exception, from the server, as on a full disk, without filling one on a shared
machine.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx
import psycopg
import pytest

from app.db.embedded import libpq_url
from tests.faults.conftest import (
    ADMIN,
    TEXT,
    corpus,
    fault_settings,
    release_numbers,
    serving,
    setup_series,
)

pytestmark = [pytest.mark.anyio, pytest.mark.db]

URL = "/v1/series/prison-health/releases"


class FullDisk:
    """Every insert into the tables :meth:`on` names fails as on a full disk, until
    :meth:`off`."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.tables: list[str] = []

    async def on(self, table: str) -> None:
        async with await psycopg.AsyncConnection.connect(
            libpq_url(self.url), autocommit=True
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
        self.tables.append(table)

    async def off(self) -> None:
        async with await psycopg.AsyncConnection.connect(
            libpq_url(self.url), autocommit=True
        ) as conn:
            for table in self.tables:
                await conn.execute(f"DROP TRIGGER IF EXISTS test_disk_full ON {table}")  # type: ignore[arg-type]
        self.tables.clear()


@pytest.fixture
async def full_disk(fault_url: str) -> AsyncIterator[FullDisk]:
    """A full disk for the session's database, made free again when the test ends."""
    disk = FullDisk(fault_url)
    try:
        yield disk
    finally:
        await disk.off()


def _sample(metrics: str, sample: str) -> float:
    found = re.search(rf"^{re.escape(sample)} (\S+)$", metrics, re.MULTILINE)
    return 0.0 if found is None else float(found[1])


async def test_a_release_that_cannot_be_stored_answers_507_and_readyz_degrades(
    client: httpx.AsyncClient, full_disk: FullDisk, fault_url: str
) -> None:
    """Before, the job failed ``internal_error`` ("the publication failed unexpectedly"), the
    wait=true post answered 422, and nothing in /readyz or /metrics said why."""
    publisher = await setup_series(client)
    counted = 'serialpub_storage_full_total{what="publication store"}'
    before = _sample((await client.get("/metrics")).text, counted)
    await full_disk.on("releases")
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
    assert _sample(metrics, counted) == before + 1
    assert _sample(metrics, "serialpub_database_full") == 1.0
    # Space added: the next post publishes, readiness comes back.
    await full_disk.off()
    again = await client.post(f"{URL}?wait=true", content=corpus(1), headers={**publisher, **TEXT})
    assert again.status_code == 201, again.text
    assert (await client.get("/readyz")).status_code == 200
    assert _sample((await client.get("/metrics")).text, "serialpub_database_full") == 0.0
    assert await release_numbers(client) == [1]


async def test_a_post_that_cannot_be_stored_answers_507(
    client: httpx.AsyncClient, full_disk: FullDisk
) -> None:
    """The upload's job and input are written in the request: a full disk there was a bare
    500."""
    publisher = await setup_series(client)
    await full_disk.on("job_inputs")
    response = await client.post(URL, content=corpus(1), headers={**publisher, **TEXT})
    assert response.status_code == 507, response.text
    assert response.json()["error"]["code"] == "storage_full"
    jobs = await client.get("/v1/series/prison-health", headers=ADMIN)
    assert jobs.status_code == 200
    ready = await client.get("/readyz")
    assert ready.status_code == 503 and ready.json()["error"]["details"]["what"] == "request"


async def test_a_post_refused_for_a_full_disk_runs_again_with_the_same_key(
    client: httpx.AsyncClient, full_disk: FullDisk
) -> None:
    """The 507 says to post again once space is added; the post carries its Idempotency-Key
    (as the docs ask). Before, the same post with the same key answered the failed job's 507
    again (``Retry-After: 60``) for ever, and only a new key published."""
    publisher = await setup_series(client)
    headers = {**publisher, **TEXT, "Idempotency-Key": "prison-health-2024"}
    await full_disk.on("releases")
    refused = await client.post(f"{URL}?wait=true", content=corpus(1), headers=headers)
    assert refused.status_code == 507, refused.text
    first = refused.json()["error"]["details"]["job"]
    # Still full: the retry is a new attempt, refused in its turn.
    still = await client.post(f"{URL}?wait=true", content=corpus(1), headers=headers)
    assert still.status_code == 507, still.text
    second = still.json()["error"]["details"]["job"]
    assert second != first
    await full_disk.off()
    published = await client.post(f"{URL}?wait=true", content=corpus(1), headers=headers)
    assert published.status_code == 201, published.text
    job = published.json()["job"]["id"]
    assert job not in (first, second)
    # Published: from then on the key answers that job, as before.
    replayed = await client.post(f"{URL}?wait=true", content=corpus(1), headers=headers)
    assert replayed.status_code == 201 and replayed.json()["job"]["id"] == job
    other = await client.post(URL, content=corpus(2), headers=headers)
    assert other.status_code == 409 and other.json()["error"]["code"] == "idempotency_key_reused"
    assert await release_numbers(client) == [1]
    # The refused jobs stay as they ended.
    for failed in (first, second):
        shown = (await client.get(f"/v1/jobs/{failed}", headers=ADMIN)).json()
        assert shown["status"] == "failed" and shown["error"]["code"] == "storage_full"


async def test_a_full_disk_met_by_one_process_is_seen_and_cleared_by_every_other(
    client: httpx.AsyncClient, full_disk: FullDisk, fault_url: str
) -> None:
    """The documented deployment: the API without a worker of its own and a ``serialpub
    worker`` beside it. Here the session's application is the worker (its in-process worker
    runs every job) and a second application on the same database, with no worker, is the
    API; each has its own runtime and memory, as two processes do. Before, ``/readyz`` of the
    API said 200 right after the worker's store failed 507, and once the API's own write had
    failed, 503 for 5 minutes although a release was stored since."""
    worker = client
    settings = fault_settings(fault_url, SERIALPUB_IN_PROCESS_WORKER=False)
    async with serving(settings) as api:

        async def states() -> list[tuple[int, str | None, float]]:
            found = []
            for process in (api, worker):
                ready = await process.get("/readyz")
                what = ready.json()["error"]["details"].get("what") if ready.is_error else None
                full = _sample((await process.get("/metrics")).text, "serialpub_database_full")
                found.append((ready.status_code, what, full))
            return found

        publisher = await setup_series(api)
        assert await states() == [(200, None, 0.0)] * 2
        # The worker's store fails: the API, which wrote nothing, says so at once.
        await full_disk.on("releases")
        refused = await api.post(
            f"{URL}?wait=true", content=corpus(1), headers={**publisher, **TEXT}
        )
        assert refused.status_code == 507, refused.text
        assert await states() == [(503, "publication store", 1.0)] * 2
        # The API's own write fails: the worker's process says so too.
        await full_disk.on("job_inputs")
        posted = await api.post(URL, content=corpus(1), headers={**publisher, **TEXT})
        assert posted.status_code == 507, posted.text
        assert await states() == [(503, "request", 1.0)] * 2
        # Space added: the first release the worker stores clears it for every process.
        await full_disk.off()
        stored = await api.post(
            f"{URL}?wait=true", content=corpus(1), headers={**publisher, **TEXT}
        )
        assert stored.status_code == 201, stored.text
        assert await states() == [(200, None, 0.0)] * 2
    assert await release_numbers(client) == [1]

"""Series publish in parallel; DELETE /v1/jobs/{id} cancels a queued or running job.

A slow publication is simulated by wrapping the core's entry point: the job's child process is
then forked from this process (``forked_compute``), so it runs the wrapper too (Linux).
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Iterator

import httpx
import psycopg
import pytest

from app.db.embedded import libpq_url
from tests.api.conftest import ADMIN, create_key, create_series, wait_job

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.db,
    pytest.mark.skipif(
        sys.platform != "linux",
        reason="the slow stand-in reaches the job's process by fork (Linux)",
    ),
]

SLOW_LABEL = "slow"
SMALL = "theft arson HIV\ntheft arson\nvandal arson cancer\nabuse arson\n"


@pytest.fixture
def slow_publication(monkeypatch: pytest.MonkeyPatch, forked_compute: None) -> Iterator[float]:
    """Publications of a corpus containing the term ``slowterm`` take ``seconds`` longer."""
    from app.core import pipeline

    seconds = 6.0
    real = pipeline.publish

    def slow(method, history, corpus, *args, **kwargs):  # type: ignore[no-untyped-def]
        if any("slowterm" in t.terms for t in corpus):
            time.sleep(seconds)
        return real(method, history, corpus, *args, **kwargs)

    monkeypatch.setattr(pipeline, "publish", slow)
    yield seconds


async def _post(
    client: httpx.AsyncClient, series: str, headers: dict[str, str], content: str, label: str = "r"
) -> dict[str, object]:
    response = await client.post(
        f"/v1/series/{series}/releases?label={label}",
        content=content,
        headers={**headers, "Content-Type": "text/plain"},
    )
    assert response.status_code == 202, response.text
    return dict(response.json())


async def _wait_status(
    client: httpx.AsyncClient, job_id: object, headers: dict[str, str], status: str
) -> None:
    for _ in range(400):
        response = await client.get(f"/v1/jobs/{job_id}", headers=headers)
        if response.json()["status"] == status:
            return
        await asyncio.sleep(0.025)
    raise AssertionError(f"job {job_id} never {status}")


async def _count(database_url: str, table: str) -> int:
    async with await psycopg.AsyncConnection.connect(libpq_url(database_url)) as conn:
        cur = await conn.execute(f"SELECT count(*) FROM {table}")  # type: ignore[arg-type]
        row = await cur.fetchone()
    assert row is not None
    return int(row[0])


async def test_small_post_to_another_series_is_not_held_by_a_big_job(
    client: httpx.AsyncClient, slow_publication: float
) -> None:
    await create_series(client, name="big")
    await create_series(client, name="small")
    publisher = await create_key(client, "publisher")
    big = await _post(client, "big", publisher, SMALL + "slowterm arson\n")
    await _wait_status(client, big["id"], publisher, "running")
    started = time.monotonic()
    response = await client.post(
        "/v1/series/small/releases?wait=true",
        content=SMALL,
        headers={**publisher, "Content-Type": "text/plain"},
    )
    assert response.status_code == 201, response.text
    # Well before the big job's extra seconds are over: it did not wait in line.
    assert time.monotonic() - started < slow_publication / 2
    assert (await client.get(f"/v1/jobs/{big['id']}", headers=publisher)).json()[
        "status"
    ] == "running"
    assert (await wait_job(client, str(big["id"]), publisher))["status"] == "succeeded"


async def test_delete_cancels_a_queued_job_and_the_series_goes_on_without_a_gap(
    client: httpx.AsyncClient, slow_publication: float, database_url: str
) -> None:
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    first = await _post(client, "prison-health", publisher, SMALL + "slowterm arson\n", "a")
    await _wait_status(client, first["id"], publisher, "running")
    second = await _post(client, "prison-health", publisher, SMALL, "b")
    deleted = await client.delete(f"/v1/jobs/{second['id']}", headers=publisher)
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["status"] == "failed"
    assert deleted.json()["error"]["code"] == "job_cancelled"
    assert deleted.json()["cancel_requested"] is True
    assert await _count(database_url, "job_inputs") == 1  # the cancelled job's input is gone
    assert (await wait_job(client, str(first["id"]), publisher))["release_no"] == 1
    third = await client.post(
        "/v1/series/prison-health/releases?wait=true&label=c",
        content=SMALL,
        headers={**publisher, "Content-Type": "text/plain"},
    )
    assert third.status_code == 201 and third.json()["release"]["release_no"] == 2
    again = await client.delete(f"/v1/jobs/{second['id']}", headers=publisher)
    assert again.status_code == 409 and again.json()["error"]["code"] == "job_finished"


async def test_delete_stops_a_running_job_and_stores_nothing(
    client: httpx.AsyncClient, slow_publication: float, database_url: str
) -> None:
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    job = await _post(client, "prison-health", publisher, SMALL + "slowterm arson\n")
    await _wait_status(client, job["id"], publisher, "running")
    started = time.monotonic()
    deleted = await client.delete(f"/v1/jobs/{job['id']}", headers=publisher)
    assert deleted.status_code == 200, deleted.text
    assert time.monotonic() - started < slow_publication - 1  # stopped, not waited out
    body = deleted.json()
    assert body["status"] == "failed" and body["error"]["code"] == "job_cancelled"
    for table in ("releases", "clusters", "published_rows", "job_inputs"):
        assert await _count(database_url, table) == 0, table
    ok = await client.post(
        "/v1/series/prison-health/releases?wait=true",
        content=SMALL,
        headers={**publisher, "Content-Type": "text/plain"},
    )
    assert ok.status_code == 201 and ok.json()["release"]["release_no"] == 1


async def test_only_the_poster_and_admins_cancel(
    client: httpx.AsyncClient, slow_publication: float
) -> None:
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    job = await _post(client, "prison-health", publisher, SMALL + "slowterm arson\n")
    for role in ("analyst", "auditor", "publisher"):
        other = await client.delete(f"/v1/jobs/{job['id']}", headers=await create_key(client, role))
        assert other.status_code == 403, (role, other.text)
    missing = await client.delete("/v1/jobs/00000000-0000-0000-0000-000000000000", headers=ADMIN)
    assert missing.status_code == 404
    assert (await client.delete(f"/v1/jobs/{job['id']}", headers=ADMIN)).status_code == 200

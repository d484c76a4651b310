"""Concurrent posts, idempotency, failed jobs (no partial release) and stalled jobs."""

from __future__ import annotations

import asyncio
import random

import httpx
import psycopg
import pytest

from app.core.errors import PublicationFailed
from app.db.embedded import libpq_url
from tests.api.conftest import create_key, create_series, wait_job
from tests.api.paper import body

pytestmark = [pytest.mark.anyio, pytest.mark.db]

URL = "/v1/series/prison-health/releases"
TERMS = ["theft", "arson", "fraud", "vandal", "abuse", "DUI", "assault", "murder"]


def _corpus(seed: int, n: int = 12) -> str:
    rng = random.Random(seed)
    lines = []
    for _ in range(n):
        terms = rng.sample(TERMS, rng.randint(1, 3)) + rng.sample(
            ["HIV", "cancer"], rng.randint(0, 1)
        )
        lines.append(" ".join(terms))
    return "\n".join(lines) + "\n"


async def test_five_concurrent_posts_give_releases_one_to_five(
    client: httpx.AsyncClient, database_url: str
) -> None:
    await create_series(client, params={"r_th": 2, "cluster_size": 3, "seed": 1})
    publisher = await create_key(client, "publisher", "prison-health")
    auditor = await create_key(client, "auditor")
    headers = {**publisher, "Content-Type": "text/plain"}
    responses = await asyncio.gather(
        *(client.post(f"{URL}?label=r{i}", content=_corpus(i), headers=headers) for i in range(5))
    )
    assert [r.status_code for r in responses] == [202] * 5
    jobs = [await wait_job(client, r.json()["id"], publisher) for r in responses]
    assert all(j["status"] == "succeeded" for j in jobs), jobs
    by_creation = sorted(jobs, key=lambda j: j["created_at"])
    assert [j["release_no"] for j in by_creation] == [1, 2, 3, 4, 5]
    listed = (await client.get(URL, headers=publisher)).json()
    assert [r["release_no"] for r in listed] == [1, 2, 3, 4, 5]
    labels = {j["release_no"]: r.json()["id"] for j, r in zip(jobs, responses, strict=True)}
    assert len(labels) == 5
    risks = (await client.get("/v1/series/prison-health/risk", headers=auditor)).json()
    assert len(risks) == 5
    assert all(r["max_serial_risk"] <= 2 + 1e-9 for r in risks), risks


async def test_same_idempotency_key_gives_one_release(client: httpx.AsyncClient) -> None:
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    headers = {**publisher, "Idempotency-Key": "upload-2023"}
    first, second = await asyncio.gather(
        client.post(URL, json=body(1), headers=headers),
        client.post(URL, json=body(1), headers=headers),
    )
    assert first.status_code == second.status_code == 202
    assert first.json()["id"] == second.json()["id"]
    await wait_job(client, first.json()["id"], publisher)
    third = await client.post(f"{URL}?wait=true", json=body(1), headers=headers)
    assert third.status_code == 201 and third.json()["job"]["id"] == first.json()["id"]
    assert len((await client.get(URL, headers=publisher)).json()) == 1
    other = await client.post(URL, json=body(2), headers=headers)
    assert other.status_code == 409
    assert other.json()["error"]["code"] == "idempotency_key_reused"
    assert len((await client.get(URL, headers=publisher)).json()) == 1


async def test_idempotency_keys_are_scoped_by_the_api_key(client: httpx.AsyncClient) -> None:
    """Another publisher choosing the same Idempotency-Key gets its own job, not the first
    publisher's (it got the other's job back, and its snapshot was never published)."""
    await create_series(client)
    alice = await create_key(client, "publisher", "prison-health")
    bob = await create_key(client, "publisher", "prison-health")
    first = await client.post(URL, json=body(1), headers={**alice, "Idempotency-Key": "y1"})
    await wait_job(client, first.json()["id"], alice)
    theirs = await client.post(URL, json=body(1), headers={**bob, "Idempotency-Key": "y1"})
    assert theirs.status_code == 202, theirs.text
    assert theirs.json()["id"] != first.json()["id"]
    # Bob's differing body under the name Alice used is not a conflict either.
    other = await client.post(URL, json=body(2), headers={**bob, "Idempotency-Key": "y2"})
    mine = await client.post(URL, json=body(3), headers={**alice, "Idempotency-Key": "y2"})
    assert other.status_code == mine.status_code == 202
    assert other.json()["id"] != mine.json()["id"]
    # Each replays its own.
    again = await client.post(URL, json=body(1), headers={**bob, "Idempotency-Key": "y1"})
    assert again.json()["id"] == theirs.json()["id"]
    conflict = await client.post(URL, json=body(2), headers={**alice, "Idempotency-Key": "y1"})
    assert conflict.status_code == 409


async def test_failed_publication_leaves_no_release_and_no_gap(
    client: httpx.AsyncClient,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    forked_compute: None,
) -> None:
    from app.core import pipeline

    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    real = pipeline.publish

    def failing(*args: object, **kwargs: object) -> object:
        raise PublicationFailed("guard reached", {"rounds": 200})

    monkeypatch.setattr(pipeline, "publish", failing)
    response = await client.post(f"{URL}?wait=true", json=body(1), headers=publisher)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "publication_failed"
    assert response.json()["error"]["details"]["rounds"] == 200
    monkeypatch.setattr(pipeline, "publish", real)
    ok = await client.post(f"{URL}?wait=true", json=body(1), headers=publisher)
    assert ok.status_code == 201 and ok.json()["release"]["release_no"] == 1


async def test_a_refused_snapshot_keeps_its_idempotency_key(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch, forked_compute: None
) -> None:
    """A job the mechanism refused (its snapshot would be refused again) answers its failure
    to the same post with the same key; only failures of the service's own (a full disk, an
    outage, interruptions: tests/faults/test_storage.py, tests/api/test_killed_compute.py)
    run again."""
    from app.core import pipeline

    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    headers = {**publisher, "Idempotency-Key": "upload-2023"}

    def failing(*args: object, **kwargs: object) -> object:
        raise PublicationFailed("guard reached", {"rounds": 200})

    monkeypatch.setattr(pipeline, "publish", failing)
    refused = await client.post(f"{URL}?wait=true", json=body(1), headers=headers)
    assert refused.status_code == 422, refused.text
    again = await client.post(f"{URL}?wait=true", json=body(1), headers=headers)
    assert again.status_code == 422
    assert again.json()["error"]["details"]["job"] == refused.json()["error"]["details"]["job"]


async def test_crash_while_storing_rolls_everything_back(
    client: httpx.AsyncClient, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.jobs import store as jobs

    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    real_store = jobs.store_publication

    async def store_then_crash(*args: object, **kwargs: object) -> object:
        await real_store(*args, **kwargs)  # type: ignore[arg-type]
        raise RuntimeError("disk full")

    monkeypatch.setattr(jobs, "store_publication", store_then_crash)
    response = await client.post(f"{URL}?wait=true", json=body(1), headers=publisher)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "internal_error"
    async with await psycopg.AsyncConnection.connect(libpq_url(database_url)) as conn:
        for table in ("releases", "clusters", "published_rows", "cluster_ledgers", "job_inputs"):
            cur = await conn.execute(f"SELECT count(*) FROM {table}")  # type: ignore[arg-type]
            assert (await cur.fetchone()) == (0,), table


async def test_stalled_job_is_retried(client: httpx.AsyncClient, database_url: str) -> None:
    """A job left 'doing' by a dead worker runs again once recovery notices it."""
    from app.db.raw import driver_connection
    from app.jobs.worker import recover_stalled
    from app.queue import open_queue
    from app.services.auth import authenticate
    from app.services.ingest import read_corpus
    from app.services.publishing import create_job
    from app.services.series import get_series

    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    runtime = client.app.state.runtime  # type: ignore[attr-defined]

    async def one_chunk():  # type: ignore[no-untyped-def]
        yield b"theft arson HIV\ntheft arson\nvandal arson cancer\nabuse arson\n"

    corpus = await read_corpus("text/plain", one_chunk(), limit=10_000)
    async with runtime.db.session() as session:
        series = await get_series(session, "prison-health")
        principal = await authenticate(session, "Bearer test-admin-token")
        job, _ = await create_job(session, principal, series, corpus, None)
        job.status, job.attempts = "running", 1
        conn = await driver_connection(session)
        cur = await conn.execute(
            "INSERT INTO procrastinate_workers (last_heartbeat) "
            "VALUES (now() - interval '1 hour') RETURNING id"
        )
        dead = (await cur.fetchone())[0]  # type: ignore[index]
        await conn.execute(
            "UPDATE procrastinate_jobs SET status = 'doing', worker_id = %s WHERE id = %s",
            (dead, job.procrastinate_job_id),
        )
    # The in-process worker's own recovery loop may requeue it first; exactly one of the two
    # does, and the job then runs once more.
    async with open_queue(runtime.db.url) as queue:
        assert await recover_stalled(queue, runtime) in (0, 1)
    done = await wait_job(client, str(job.id), await create_key(client, "auditor"))
    assert done["status"] == "succeeded" and done["release_no"] == 1
    assert len((await client.get(URL, headers=publisher)).json()) == 1

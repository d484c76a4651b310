"""Dry runs are jobs: computed where publications are (the worker's compute child), never in
the API process; ``wait=true`` answers 200 with the summary and risk, without it 202 with a
job whose ``result`` carries them; nothing is stored."""

from __future__ import annotations

import httpx
import psycopg
import pytest

from app.db.embedded import libpq_url
from tests.api.conftest import ADMIN, create_key, create_series, wait_job
from tests.api.paper import body

pytestmark = [pytest.mark.anyio, pytest.mark.db]

URL = "/v1/series/prison-health/releases"


async def test_the_api_process_never_computes_a_dry_run(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The core's publication, broken in this process (the API's), still answers a dry run:
    it runs in the job's compute child, which the clean fork server starts. The API computed
    it itself before: the whole publication and the series' history in its own memory."""
    from app.core import pipeline

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the API process ran the publication")

    monkeypatch.setattr(pipeline, "publish", refuse)
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    response = await client.post(f"{URL}?dry_run=true&wait=true", json=body(1), headers=publisher)
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["dry_run"] is True and result["job"] is None
    assert result["release"]["release_no"] == 1 and result["release"]["n_rows"] == 6
    assert result["risk"]["max_serial_risk"] <= 2 + 1e-9


async def test_a_dry_run_without_waiting_is_a_job_that_keeps_its_answer(
    client: httpx.AsyncClient, database_url: str
) -> None:
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    auditor = await create_key(client, "auditor")
    published = await client.post(f"{URL}?wait=true", json=body(1), headers=publisher)
    assert published.status_code == 201, published.text

    queued = await client.post(
        f"{URL}?dry_run=true", json=body(2), headers={**publisher, "Idempotency-Key": "k-2"}
    )
    assert queued.status_code == 202, queued.text
    job = queued.json()
    assert job["dry_run"] is True and job["result"] is None and job["status"] == "queued"
    done = await wait_job(client, job["id"], publisher)
    assert done["status"] == "succeeded", done
    assert done["release_no"] is None  # nothing published
    result = done["result"]
    assert result["release"]["release_no"] == 2 and result["release"]["label"] == "2024"
    # Judged against release 1, as the publication would be: its risk counts both releases.
    assert result["risk"]["release_no"] == 2 and result["risk"]["max_serial_risk"] <= 2 + 1e-9
    # The publisher reads what the release would publish; an auditor every counterfeit row.
    assert result["risk"]["perturbation"]["published_only"] is True
    assert result["risk"]["suppressed"] is None
    audited = await wait_job(client, job["id"], auditor)
    assert audited["result"]["risk"]["perturbation"]["published_only"] is False
    assert audited["result"]["risk"]["suppressed"] is not None
    assert audited["report"] is not None and audited["phase_seconds"]["prepare"] >= 0

    listed = await client.get(URL, headers=publisher)
    assert [r["release_no"] for r in listed.json()] == [1]
    async with await psycopg.AsyncConnection.connect(libpq_url(database_url)) as conn:
        cur = await conn.execute("SELECT count(*) FROM job_inputs WHERE job_id = %s", (job["id"],))
        assert await cur.fetchone() == (0,)  # the upload is dropped as for any job
    # A dry run takes no Idempotency-Key: the real post with the same key is a new job.
    real = await client.post(
        f"{URL}?wait=true", json=body(2), headers={**publisher, "Idempotency-Key": "k-2"}
    )
    assert real.status_code == 201, real.text
    assert real.json()["job"]["id"] != job["id"] and real.json()["release"]["release_no"] == 2


async def test_a_dry_run_does_not_queue_behind_the_series_publications(
    client: httpx.AsyncClient, database_url: str
) -> None:
    """Publications of a series carry its lock (one at a time, in posting order); a dry run,
    which stores nothing, carries none."""
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    real = (await client.post(URL, json=body(1), headers=publisher)).json()
    dry = (await client.post(f"{URL}?dry_run=true", json=body(1), headers=publisher)).json()
    async with await psycopg.AsyncConnection.connect(libpq_url(database_url)) as conn:
        cur = await conn.execute(
            "SELECT j.id::text, p.lock FROM jobs j JOIN procrastinate_jobs p "
            "ON p.id = j.procrastinate_job_id WHERE j.id = ANY(%s::uuid[])",
            ([real["id"], dry["id"]],),
        )
        locks = dict(await cur.fetchall())
    assert locks[dry["id"]] is None and locks[real["id"]].startswith("series:")
    for job in (real, dry):
        assert (await wait_job(client, job["id"], publisher))["status"] == "succeeded"


async def test_dry_runs_are_counted_apart_from_publications(client: httpx.AsyncClient) -> None:
    def count(text: str, name: str) -> float:
        line = next((x for x in text.splitlines() if x.startswith(name)), None)
        return 0.0 if line is None else float(line.rsplit(" ", 1)[1])

    await create_series(client)
    before = (await client.get("/metrics")).text
    response = await client.post(f"{URL}?dry_run=true&wait=true", json=body(1), headers=ADMIN)
    assert response.status_code == 200, response.text
    after = (await client.get("/metrics")).text
    dry = 'serialpub_dry_runs_total{status="succeeded"}'
    published = 'serialpub_jobs_total{status="succeeded"}'
    assert count(after, dry) == count(before, dry) + 1
    assert count(after, published) == count(before, published)

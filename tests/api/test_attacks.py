"""The semantic audit over HTTP (design.md §11): the series parameter, the
report the publication job keeps, who reads it, the background upload, all or nothing."""

from __future__ import annotations

import asyncio
import random
import threading
import uuid
from typing import Any

import httpx
import pytest

from app.jobs import audit as semantic_audit
from tests.api.conftest import ADMIN, create_key, create_series, wait_job

pytestmark = [pytest.mark.anyio, pytest.mark.db]

#: Private term -> the public terms it goes with in the world (and in the background).
TOPICS = {
    "HIV": ["clinic", "needle", "viral"],
    "cancer": ["chemo", "tumor", "oncology"],
    "herpes": ["lesion", "antiviral", "rash"],
}
NOISE = ["theft", "arson", "fraud", "vandal", "abuse", "assault", "dui", "murder"]


def _transactions(release: int, n: int = 80) -> list[list[str]]:
    """Rows that carry their private term's companions: a semantic attacker gains."""
    rng = random.Random(release)
    rows = []
    for _ in range(n):
        private = rng.choice(list(TOPICS))
        rows.append([private, *rng.sample(TOPICS[private], 2), *rng.sample(NOISE, 2)])
    return rows


def _body(release: int) -> dict[str, Any]:
    return {
        "label": f"r{release}",
        "transactions": [
            {"terms": terms, "individual": f"p{release}-{i}"}
            for i, terms in enumerate(_transactions(release))
        ],
    }


AUDITED: dict[str, Any] = {
    "cluster_size": 4,
    "seed": 3,
    "semantic_audit": {"selection": ["aba", "mra"]},
}


async def _publish(
    client: httpx.AsyncClient, name: str, release: int, publisher: dict[str, str], body: Any = None
) -> dict[str, Any]:
    posted = await client.post(
        f"/v1/series/{name}/releases",
        headers=publisher,
        json=_body(release) if body is None else body,
    )
    assert posted.status_code == 202, posted.text
    job = await wait_job(client, posted.json()["id"], ADMIN)
    assert job["status"] == "succeeded", job
    return job


async def test_each_job_keeps_an_attack_report_for_auditors(client: httpx.AsyncClient) -> None:
    created = await create_series(client, "audited", private_terms=list(TOPICS), params=AUDITED)
    assert created["params"]["semantic_audit"] == {
        "enabled": True,
        "scoring": "ngd",
        "selection": ["aba", "mra"],
        "background": "published",
        "seed": None,
        "window": 5,
        "mixture_draws": 16,
    }
    publisher = await create_key(client, "publisher", "audited")
    jobs = [await _publish(client, "audited", n, publisher) for n in (1, 2)]
    # The audit is a phase of the job, timed like the others.
    assert all(job["phase_seconds"]["attack"] >= 0 for job in jobs)
    auditor = await create_key(client, "auditor", "audited")
    listed = (await client.get("/v1/series/audited/releases", headers=auditor)).json()
    for number in (1, 2):
        response = await client.get(
            f"/v1/series/audited/releases/{number}/attacks", headers=auditor
        )
        assert response.status_code == 200, response.text
        report = response.json()
        assert report["status"] == "done" and report["release_no"] == number
        assert (report["tracing"], report["ambiguous_rows"]) == ("individuals", 0)
        assert set(report["private_copies"]) == {"aba-ngd", "mra-ngd", "random"}
        # The background is every public row up to this release.
        assert report["background_transactions"] == sum(
            r["n_rows"] for r in listed if r["release_no"] <= number
        )
        best = report["best"]
        assert best["copies"] > 0 and 0 <= best["share"] <= 1
        # Companion terms give the attack away: it beats random placement.
        assert best["share"] > report["private_copies"]["random"]["random_expected"]
        assert report["seconds"] > 0
        # The frequency detector over the series so far: blind and detector discounts of
        # this release; ``perfect`` only while the job holds every ledger (its
        # own: release 1).
        frequency = report["frequency"]
        assert frequency["score"] == "rarity" and frequency["r_th"] > 0
        perfect = {"perfect", "control"} if number == 1 else set()
        assert set(frequency["risk"]) == {"blind", "detector", *perfect}
        assert frequency["risk"]["detector"]["release_no"] == number
        # Aggregates only: no term of the corpus, public or private, is in the report.
        text = response.text
        assert not [t for t in [*TOPICS, *NOISE, *sum(TOPICS.values(), [])] if t in text]
    for role in ("analyst", "publisher"):
        denied = await client.get(
            "/v1/series/audited/releases/1/attacks", headers=await create_key(client, role)
        )
        assert denied.status_code == 403
    await create_series(client, name="another-series")
    other = await create_key(client, "auditor", "another-series")
    assert (
        await client.get("/v1/series/audited/releases/1/attacks", headers=other)
    ).status_code == 403
    missing = await client.get("/v1/series/audited/releases/3/attacks", headers=auditor)
    assert missing.status_code == 404


async def test_no_report_without_the_parameter(client: httpx.AsyncClient) -> None:
    created = await create_series(
        client, "plain", private_terms=list(TOPICS), params={"cluster_size": 4}
    )
    assert created["params"]["semantic_audit"]["enabled"] is False
    job = await _publish(client, "plain", 1, await create_key(client, "publisher", "plain"))
    assert "attack" not in job["phase_seconds"]
    response = await client.get("/v1/series/plain/releases/1/attacks", headers=ADMIN)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "no_attack_report"
    assert response.json()["error"]["details"] == {"series": "plain", "release_no": 1}


@pytest.mark.parametrize(
    ("value", "param"),
    [
        ({"scoring": "bert"}, "semantic_audit.scoring"),
        ({"selection": []}, "semantic_audit.selection"),
        ({"selection": ["vpa"]}, "semantic_audit.selection"),
        ({"background": "web"}, "semantic_audit.background"),
        ({"seed": -1}, "semantic_audit.seed"),
        ({"window": 0}, "semantic_audit.window"),
        ({"enabled": "yes"}, "semantic_audit.enabled"),
        ({"colour": "red"}, "semantic_audit.colour"),
        ("yes", "semantic_audit"),
    ],
)
async def test_a_bad_setting_is_named(client: httpx.AsyncClient, value: Any, param: str) -> None:
    response = await client.post(
        "/v1/series",
        headers=ADMIN,
        json={"name": "bad", "private_terms": ["HIV"], "params": {"semantic_audit": value}},
    )
    assert response.status_code == 422, response.text
    assert response.json()["error"]["details"]["param"] == param
    assert (await client.get("/v1/series/bad", headers=ADMIN)).status_code == 404


async def test_the_uploaded_background(client: httpx.AsyncClient) -> None:
    await create_series(
        client,
        "uploaded",
        private_terms=list(TOPICS),
        params={"cluster_size": 4, "semantic_audit": {"background": "uploaded"}},
    )
    publisher = await create_key(client, "publisher", "uploaded")
    await _publish(client, "uploaded", 1, publisher)
    first = (await client.get("/v1/series/uploaded/releases/1/attacks", headers=ADMIN)).json()
    assert (first["status"], first["reason"]) == ("skipped", "no_background_uploaded")
    corpus = "".join(" ".join(t) + "\n" for t in _transactions(99, 200))
    plain = {"Content-Type": "text/plain"}
    for role in ("analyst", "auditor"):
        denied = await client.put(
            "/v1/series/uploaded/background",
            content=corpus,
            headers={**plain, **await create_key(client, role)},
        )
        assert denied.status_code == 403
    wrong = await client.put(
        "/v1/series/uploaded/background", content="a\n\nb\n", headers={**plain, **publisher}
    )
    assert wrong.status_code == 422  # the same checks as a release: line 2 has no terms
    put = await client.put(
        "/v1/series/uploaded/background", content=corpus, headers={**plain, **publisher}
    )
    assert put.status_code == 200, put.text
    assert (put.json()["transactions"], put.json()["used"]) == (200, True)
    await _publish(client, "uploaded", 2, publisher)
    second = (await client.get("/v1/series/uploaded/releases/2/attacks", headers=ADMIN)).json()
    assert second["status"] == "done" and second["background_transactions"] == 200


async def test_rows_without_individuals_are_traced_by_content(
    client: httpx.AsyncClient,
) -> None:
    await create_series(client, "anonymous", private_terms=list(TOPICS), params=AUDITED)
    publisher = await create_key(client, "publisher", "anonymous")
    body = {"transactions": [{"terms": t} for t in _transactions(1)]}
    await _publish(client, "anonymous", 1, publisher, body)
    report = (await client.get("/v1/series/anonymous/releases/1/attacks", headers=ADMIN)).json()
    assert (report["status"], report["tracing"]) == ("done", "content")
    assert report["private_copies"]["random"]["copies"] > 0


async def test_a_failed_audit_leaves_the_release_published(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The audit runs after the release is committed: its failure costs the report, never
    the release."""

    def broken(*args: Any, **kwargs: Any) -> dict[str, Any]:
        raise RuntimeError("the audit broke")

    monkeypatch.setattr(semantic_audit, "audit_report", broken)
    await create_series(client, "fragile", private_terms=list(TOPICS), params=AUDITED)
    publisher = await create_key(client, "publisher", "fragile")
    job = await _publish(client, "fragile", 1, publisher)
    assert (job["release_no"], job["error"], job["progress"]) == (1, None, 1.0)
    assert job["report"]["semantic_audit"] == "failed"
    releases = await client.get("/v1/series/fragile/releases", headers=ADMIN)
    assert [r["release_no"] for r in releases.json()] == [1]
    report = await client.get("/v1/series/fragile/releases/1/attacks", headers=ADMIN)
    assert (report.status_code, report.json()["error"]["code"]) == (404, "no_attack_report")
    # The series goes on: the next release publishes, and is audited once the audit works.
    monkeypatch.undo()
    await _publish(client, "fragile", 2, publisher)
    report = await client.get("/v1/series/fragile/releases/2/attacks", headers=ADMIN)
    assert report.status_code == 200, report.text


async def test_openapi_documents_the_audit(client: httpx.AsyncClient) -> None:
    paths = (await client.get("/openapi.json")).json()["paths"]
    read = paths["/v1/series/{name}/releases/{release_no}/attacks"]["get"]
    assert read["responses"]["200"]["content"]["application/json"]["example"]["best"]
    assert {"401", "403", "404"} <= set(read["responses"])
    upload = paths["/v1/series/{name}/background"]["put"]["requestBody"]["content"]
    assert {"text/plain", "text/csv", "application/json"} == set(upload)


async def test_the_job_shows_the_audit_s_progress(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    real = semantic_audit.audit_report

    def held(*args: Any, **kwargs: Any) -> dict[str, Any]:
        kwargs["progress"]("private", 0.5)
        release.wait(30)  # until the test has seen the job in phase attack
        return real(*args, **kwargs)

    monkeypatch.setattr(semantic_audit, "audit_report", held)
    await create_series(client, "watched", private_terms=list(TOPICS), params=AUDITED)
    publisher = await create_key(client, "publisher", "watched")
    posted = await client.post("/v1/series/watched/releases", headers=publisher, json=_body(1))
    job_id = posted.json()["id"]
    try:
        for _ in range(200):
            job = (await client.get(f"/v1/jobs/{job_id}", headers=publisher)).json()
            if job["phase"] == "attack" and job["progress"] > 0.9:
                break
            await asyncio.sleep(0.05)
        assert (job["status"], job["phase"]) == ("running", "attack")
        assert 5 / 6 < job["progress"] < 1
    finally:
        release.set()
    assert (await wait_job(client, job_id, ADMIN))["status"] == "succeeded"


async def test_the_release_is_committed_before_its_audit_ends(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the audit runs the release is already out (listed, numbered on the job); a
    DELETE then answers 409, as for a finished job; the report is there once the job is."""
    started, go = threading.Event(), threading.Event()
    real = semantic_audit.audit_report

    def held(*args: Any, **kwargs: Any) -> dict[str, Any]:
        started.set()
        go.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(semantic_audit, "audit_report", held)
    await create_series(client, "held", private_terms=list(TOPICS), params=AUDITED)
    publisher = await create_key(client, "publisher", "held")
    posted = await client.post("/v1/series/held/releases", headers=publisher, json=_body(1))
    job_id = posted.json()["id"]
    try:
        assert await asyncio.to_thread(started.wait, 60)
        releases = (await client.get("/v1/series/held/releases", headers=ADMIN)).json()
        assert [r["release_no"] for r in releases] == [1]
        job = (await client.get(f"/v1/jobs/{job_id}", headers=ADMIN)).json()
        assert (job["status"], job["phase"], job["release_no"]) == ("running", "attack", 1)
        deleted = await client.delete(f"/v1/jobs/{job_id}", headers=publisher)
        assert deleted.status_code == 409, deleted.text
        assert deleted.json()["error"]["code"] == "job_finished"
    finally:
        go.set()
    job = await wait_job(client, job_id, ADMIN)
    assert (job["status"], job["release_no"], job["progress"]) == ("succeeded", 1, 1.0)
    assert "semantic_audit" not in job["report"] and job["phase_seconds"]["attack"] > 0
    report = await client.get("/v1/series/held/releases/1/attacks", headers=ADMIN)
    assert report.status_code == 200 and report.json()["status"] == "done", report.text


async def _unqueued_job(client: httpx.AsyncClient, name: str) -> uuid.UUID:
    """A job row of series ``name`` with its input, not handed to procrastinate (the test
    runs it, and may cancel it as a stopping worker does)."""
    from app.db.models import Job
    from app.db.repositories.jobs import JobRepository
    from app.services.ingest import read_corpus
    from app.services.payload import encode_corpus
    from app.services.series import get_series

    runtime = client.app.state.runtime  # type: ignore[attr-defined]
    lines = "\n".join(" ".join(t) for t in _transactions(1)).encode()

    async def one_chunk():  # type: ignore[no-untyped-def]
        yield lines

    corpus = await read_corpus("text/plain", one_chunk(), limit=100_000, secret=runtime.secret)
    async with runtime.db.session() as session:
        series = await get_series(session, name)
        job = Job(
            id=uuid.uuid4(),
            series_id=series.id,
            status="queued",
            progress=0.0,
            extra_private_terms=[],
            n_transactions=len(corpus),
            attempts=0,
            phase_seconds={},
        )
        await JobRepository(session).add(job, encode_corpus(corpus.compact))
    return job.id


async def test_a_stopping_worker_stops_the_audit_thread_and_the_release_stands(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker's shutdown cancels the job during its audit: the audit's thread stops at
    its next progress report instead of attacking on, and the job, whose release is
    committed, succeeds without a report rather than being requeued (the audit's ground
    truth, the compute child's result, is gone)."""
    from app.jobs.publication import run_job

    started, stopped = threading.Event(), threading.Event()
    reports = 0

    def endless(*args: Any, **kwargs: Any) -> dict[str, Any]:
        nonlocal reports
        started.set()
        try:
            for _ in range(600):  # a long audit, reporting every 50 ms
                kwargs["progress"]("private", 0.5)
                reports += 1
                threading.Event().wait(0.05)
        except semantic_audit.AuditCancelled:
            stopped.set()
            raise
        raise AssertionError("the audit was never told of the cancellation")

    monkeypatch.setattr(semantic_audit, "audit_report", endless)
    await create_series(client, "stopped", private_terms=list(TOPICS), params=AUDITED)
    job_id = await _unqueued_job(client, "stopped")
    runtime = client.app.state.runtime  # type: ignore[attr-defined]
    running = asyncio.create_task(run_job(runtime, job_id))
    assert await asyncio.to_thread(started.wait, 60)
    running.cancel()  # what procrastinate does to running jobs past the shutdown grace
    with pytest.raises(asyncio.CancelledError):
        await running
    assert await asyncio.to_thread(stopped.wait, 10)
    assert reports < 400  # stopped well before the end (30 s of reports)
    job = await wait_job(client, str(job_id), ADMIN)
    assert (job["status"], job["release_no"], job["interruptions"]) == ("succeeded", 1, [])
    releases = (await client.get("/v1/series/stopped/releases", headers=ADMIN)).json()
    assert [r["release_no"] for r in releases] == [1]
    report = await client.get("/v1/series/stopped/releases/1/attacks", headers=ADMIN)
    assert report.status_code == 404


async def test_a_job_requeued_after_its_commit_is_not_published_again(
    client: httpx.AsyncClient,
) -> None:
    """A worker that died in the audit leaves the job running with its release committed;
    its next run (after the recovery requeued it) finishes it, and publishes nothing twice."""
    from app.db.repositories.jobs import JobRepository
    from app.jobs.publication import note_interruption, run_job

    await create_series(client, "crashed", private_terms=list(TOPICS), params=AUDITED)
    job_id = await _unqueued_job(client, "crashed")
    runtime = client.app.state.runtime  # type: ignore[attr-defined]
    async with runtime.db.session() as session:
        job = await JobRepository(session).get(job_id, for_update=True)
        assert job is not None
        job.status, job.release_no, job.attempts = "running", 1, 1
        note_interruption(job, "worker_restarted")  # what the recovery does
    await run_job(runtime, job_id)
    job_out = await wait_job(client, str(job_id), ADMIN)
    assert (job_out["status"], job_out["release_no"], job_out["attempts"]) == ("succeeded", 1, 1)
    assert (await client.get("/v1/series/crashed/releases", headers=ADMIN)).json() == []

"""Undoing a mistaken upload (docs/api-releases.md,
"POST /v1/series/{name}/releases/{release_no}/withdraw"; docs/api.md, "DELETE
/v1/series/{name}"): a withdrawn release is gone for analysts and publishers, kept for
auditors and in the history; a series that published nothing can be deleted."""

from __future__ import annotations

import logging
import uuid
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Job, Series
from tests.api.conftest import ADMIN, create_key, create_series
from tests.api.paper import body

pytestmark = [pytest.mark.anyio, pytest.mark.db]

URL = "/v1/series/{}/releases"
REASON = "the 2023 snapshot was uploaded as 2024"


async def _publish(client: httpx.AsyncClient, name: str, release: int) -> None:
    response = await client.post(f"{URL.format(name)}?wait=true", json=body(release), headers=ADMIN)
    assert response.status_code == 201, response.text


def _admin_lines(caplog: pytest.LogCaptureFixture, event: str) -> list[dict[str, Any]]:
    """The structured events of the admin log (structlog's event dicts, as stdlib records)."""
    return [
        r.msg
        for r in caplog.records
        if r.name == "serialpub.admin" and isinstance(r.msg, dict) and r.msg["event"] == event
    ]


async def test_a_withdrawn_release_is_gone_for_analysts_and_kept_for_auditors(
    client: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    await create_series(client)
    analyst = await create_key(client, "analyst")
    publisher = await create_key(client, "publisher", "prison-health")
    auditor = await create_key(client, "auditor")
    for release in (1, 2):
        await _publish(client, "prison-health", release)
    url = URL.format("prison-health")
    assert (await client.get(f"{url}/1", headers=analyst)).status_code == 200  # now remembered

    for key in (analyst, publisher, auditor):
        refused = await client.post(f"{url}/1/withdraw", json={"reason": REASON}, headers=key)
        assert refused.status_code == 403, refused.text
    caplog.set_level(logging.INFO, logger="serialpub.admin")
    withdrawn = await client.post(
        f"{url}/1/withdraw", json={"reason": f"  {REASON} "}, headers=ADMIN
    )
    assert withdrawn.status_code == 200, withdrawn.text
    assert withdrawn.json()["release_no"] == 1
    assert withdrawn.json()["withdrawn"]["reason"] == REASON
    [line] = _admin_lines(caplog, "release withdrawn")
    assert line["series"] == "prison-health" and line["release_no"] == 1
    assert line["role"] == "admin" and uuid.UUID(line["key_id"]) and line["reason"] == REASON

    for key in (analyst, publisher):
        for query in ("", "?format=ndjson"):
            gone = await client.get(f"{url}/1{query}", headers=key)
            assert gone.status_code == 410, gone.text
            error = gone.json()["error"]
            assert error["code"] == "release_withdrawn" and error["details"]["reason"] == REASON
            assert REASON in error["message"]
        assert (await client.head(f"{url}/1", headers=key)).status_code == 410
        assert (await client.get(f"{url}/2", headers=key)).status_code == 200
    for key in (auditor, ADMIN):
        assert (await client.get(f"{url}/1", headers=key)).status_code == 200
        for part in ("risk", "ledger", "cover", "risk/rows"):
            assert (await client.get(f"{url}/1/{part}", headers=key)).status_code == 200, part

    listed = (await client.get(url, headers=analyst)).json()
    assert listed[0]["withdrawn"]["reason"] == REASON and listed[0]["withdrawn"]["at"]
    assert listed[1]["withdrawn"] is None
    again = await client.post(f"{url}/1/withdraw", json={"reason": "twice"}, headers=ADMIN)
    assert again.status_code == 409 and again.json()["error"]["code"] == "already_withdrawn"
    assert again.json()["error"]["details"]["reason"] == REASON
    missing = await client.post(f"{url}/9/withdraw", json={"reason": REASON}, headers=ADMIN)
    assert missing.status_code == 404
    for bad in ({}, {"reason": "  "}, {"reason": REASON, "extra": 1}):
        refused = await client.post(f"{url}/2/withdraw", json=bad, headers=ADMIN)
        assert refused.status_code == 422 and refused.json()["error"]["code"] == "invalid_body"
    assert (await client.get(f"{url}/2", headers=analyst)).status_code == 200


async def test_a_withdrawn_release_still_counts_in_the_history(client: httpx.AsyncClient) -> None:
    """It was public: release 2 is judged against it, numbered after it, and comes out as it
    does beside a release 1 that was never withdrawn (same seed, same snapshots)."""
    for name in ("kept", "withdrawn"):
        await create_series(client, name=name)
        await _publish(client, name, 1)
    withdrawn = await client.post(
        f"{URL.format('withdrawn')}/1/withdraw", json={"reason": REASON}, headers=ADMIN
    )
    assert withdrawn.status_code == 200, withdrawn.text
    releases, risks = {}, {}
    for name in ("kept", "withdrawn"):
        await _publish(client, name, 2)
        document = (await client.get(f"{URL.format(name)}/2", headers=ADMIN)).json()
        assert document.pop("series") == name and document["release_no"] == 2
        releases[name] = document
        risks[name] = (await client.get(f"/v1/series/{name}/risk", headers=ADMIN)).json()
    assert releases["withdrawn"] == releases["kept"]
    assert risks["withdrawn"] == risks["kept"] and len(risks["kept"]) == 2


async def test_a_series_without_releases_can_be_deleted(
    client: httpx.AsyncClient, session: AsyncSession, caplog: pytest.LogCaptureFixture
) -> None:
    await create_series(client, name="mistake")
    analyst = await create_key(client, "analyst", "mistake")
    for key in (analyst, await create_key(client, "auditor")):
        assert (await client.delete("/v1/series/mistake", headers=key)).status_code == 403
    caplog.set_level(logging.INFO, logger="serialpub.admin")
    deleted = await client.delete("/v1/series/mistake", headers=ADMIN)
    assert deleted.status_code == 204, deleted.text
    [line] = _admin_lines(caplog, "series deleted")
    assert line["series"] == "mistake" and line["role"] == "admin" and uuid.UUID(line["key_id"])
    assert (await client.get("/v1/series/mistake", headers=ADMIN)).status_code == 404
    assert (await client.delete("/v1/series/mistake", headers=ADMIN)).status_code == 404
    # The name is free again, and a key scoped to it applies to the new series.
    await create_series(client, name="mistake")
    assert (await client.get(URL.format("mistake"), headers=analyst)).status_code == 200

    # A job that may yet publish holds the series.
    series_id = await session.scalar(select(Series.id).where(Series.name == "mistake"))
    session.add(Job(id=uuid.uuid4(), series_id=series_id, status="queued", progress=0.0))
    await session.commit()
    busy = await client.delete("/v1/series/mistake", headers=ADMIN)
    assert busy.status_code == 409 and busy.json()["error"]["code"] == "series_has_jobs"


async def test_a_series_that_published_cannot_be_deleted(client: httpx.AsyncClient) -> None:
    await create_series(client)
    await _publish(client, "prison-health", 1)
    await client.post(
        f"{URL.format('prison-health')}/1/withdraw", json={"reason": REASON}, headers=ADMIN
    )
    refused = await client.delete("/v1/series/prison-health", headers=ADMIN)
    assert refused.status_code == 409, refused.text
    error = refused.json()["error"]
    assert error["code"] == "series_has_releases" and error["details"]["releases"] == 1
    assert (await client.get(f"{URL.format('prison-health')}/1", headers=ADMIN)).status_code == 200

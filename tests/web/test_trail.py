"""The web view's reads in the access trail (app/web/trail.py; docs/web.md, "The access
trail"): a page or a download is recorded as the API records the same read, with the same
action, its status (refusals too) and ``details.via`` ``web``."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.api.conftest import ADMIN, create_series
from tests.web.support import SERIES, browser, publish_example, signed_in

pytestmark = [pytest.mark.anyio, pytest.mark.db]

#: An event as compared here: (action, series, release_no, status).
Seen = tuple[str, str | None, int | None, int]


async def _key_id(client: httpx.AsyncClient, role: str) -> str:
    listed = (await client.get("/v1/keys", headers=ADMIN)).json()
    (found,) = [k["id"] for k in listed if k["role"] == role and k["series"] == SERIES]
    return str(found)


async def _events(client: httpx.AsyncClient, key_id: str) -> list[dict[str, Any]]:
    response = await client.get("/v1/access-trail", params={"key_id": key_id}, headers=ADMIN)
    assert response.status_code == 200, response.text
    return list(response.json()["events"])


def _sorted(seen: list[Seen]) -> list[Seen]:
    return sorted(seen, key=str)  # None and numbers side by side


def _seen(events: list[dict[str, Any]], via_web: bool) -> list[Seen]:
    return _sorted(
        [
            (e["action"], e["series"], e["release_no"], e["status"])
            for e in events
            if (e["details"].get("via") == "web") == via_web
        ]
    )


async def _job(web: httpx.AsyncClient) -> str:
    page = (await web.get(f"/web/series/{SERIES}")).text
    return page.split('data-job="')[1].split('"')[0]


async def test_an_auditor_s_pages_are_recorded_as_the_same_reads_over_the_api(
    client: httpx.AsyncClient,
) -> None:
    keys = await publish_example(client, ("2022", "2023"))
    auditor_id = await _key_id(client, "auditor")
    web = await signed_in(client, keys["auditor"])
    job = await _job(web)
    before = len(await _events(client, auditor_id))
    pages = (
        f"/web/series/{SERIES}",
        f"/web/series/{SERIES}/releases/1",
        f"/web/jobs/{job}",
    )
    for path in pages:
        assert (await web.get(path)).status_code == 200, path
    # What the pages show, read over the API with the same key.
    bearer = {"Authorization": f"Bearer {keys['auditor']}"}
    reads = (
        f"/v1/series/{SERIES}/releases",
        f"/v1/series/{SERIES}/risk",
        f"/v1/series/{SERIES}/releases/1",
        f"/v1/series/{SERIES}/releases/1/risk",
        f"/v1/series/{SERIES}/releases/1/cover",
        f"/v1/jobs/{job}",
    )
    for path in reads:
        assert (await client.get(path, headers=bearer)).status_code == 200, path
    events = (await _events(client, auditor_id))[before:]
    over_web, over_api = _seen(events, True), _seen(events, False)
    assert over_web == over_api
    assert over_web == _sorted(
        [
            ("release.list", SERIES, None, 200),
            ("risk.read", SERIES, None, 200),
            ("release.read", SERIES, 1, 200),
            ("risk.read", SERIES, 1, 200),
            ("cover.read", SERIES, 1, 200),
            ("job.read", None, None, 200),
        ]
    )
    jobs = [e for e in events if e["action"] == "job.read"]
    assert [e["details"] for e in jobs] == [{"via": "web", "job": job}, {"job": job}]
    assert all(e["role"] == "auditor" for e in events)


async def test_downloads_and_the_counts_page_are_release_reads(
    client: httpx.AsyncClient,
) -> None:
    keys = await publish_example(client, ("2022", "2023"))
    analyst_id = await _key_id(client, "analyst")
    web = await signed_in(client, keys["analyst"])
    base = f"/web/series/{SERIES}/releases/2"
    for path in (f"{base}/release.json", f"{base}/release.ndjson", f"{base}/supports.csv"):
        assert (await web.get(path)).status_code == 200, path
    assert (await web.get(f"/web/series/{SERIES}/counts?term=HIV")).status_code == 200
    events = await _events(client, analyst_id)
    downloads = [e for e in events if "file" in e["details"]]
    assert [(e["action"], e["release_no"], e["details"]["file"]) for e in downloads] == [
        ("release.read", 2, "release.json"),
        ("release.read", 2, "release.ndjson"),
        ("release.read", 2, "supports.csv"),
    ]
    counts = [e for e in events if "file" not in e["details"]]
    # The counts page lists the releases and reads each one's public file.
    assert _seen(counts, True) == _sorted(
        [
            ("release.list", SERIES, None, 200),
            ("release.read", SERIES, 1, 200),
            ("release.read", SERIES, 2, 200),
        ]
    )


async def test_refused_pages_are_recorded_with_their_status(client: httpx.AsyncClient) -> None:
    keys = await publish_example(client, ("2022", "2023"))
    await create_series(client, "another", params={"r_th": 2})
    withdrawn = await client.post(
        f"/v1/series/{SERIES}/releases/2/withdraw", json={"reason": "wrong file"}, headers=ADMIN
    )
    assert withdrawn.status_code == 200
    auditor = await signed_in(client, keys["auditor"])
    job = await _job(auditor)
    analyst_id = await _key_id(client, "analyst")
    analyst = await signed_in(client, keys["analyst"])
    for path, status in (
        (f"/web/series/{SERIES}/releases/2", 410),
        (f"/web/series/{SERIES}/releases/2/release.json", 410),
        (f"/web/series/{SERIES}/releases/1", 200),
        ("/web/series/another", 403),
        (f"/web/jobs/{job}", 403),
    ):
        assert (await analyst.get(path)).status_code == status, path
    # Not signed in: no key to name, nothing recorded (the API's 401 neither).
    assert (await browser(client).get(f"/web/series/{SERIES}/releases/1")).status_code == 303
    assert _seen(await _events(client, analyst_id), True) == _sorted(
        [
            ("release.read", SERIES, 2, 410),
            ("release.read", SERIES, 2, 410),
            # An analyst's release page: the release only, no risk or cover.
            ("release.read", SERIES, 1, 200),
            ("release.list", "another", None, 403),
            ("job.read", None, None, 403),
        ]
    )
    everything = (await client.get("/v1/access-trail", headers=ADMIN)).json()["events"]
    assert all(e["key_id"] is not None for e in everything if e["details"].get("via"))

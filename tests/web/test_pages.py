"""Pages in the cases the example series does not reach: names that are markup, a method
that publishes chunks, a release that does not exist, a verdict still being computed."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from app.schemas.overview import Verdict
from app.services import verdict
from app.web import pages
from tests.api.conftest import ADMIN, create_series
from tests.support.database import ROOT
from tests.web.support import SERIES, browser, publish_example, signed_in

pytestmark = [pytest.mark.anyio, pytest.mark.db]

ADMIN_KEY = ADMIN["Authorization"].removeprefix("Bearer ")


async def test_a_term_that_is_markup_is_shown_as_text(client: httpx.AsyncClient) -> None:
    await create_series(client, "marked", private_terms=["<b>HIV</b>"], params={"r_th": 2})
    web = await signed_in(client, ADMIN_KEY)
    for path in ("/web/series", "/web/series/marked"):
        page = (await web.get(path)).text
        assert "&lt;b&gt;HIV&lt;/b&gt;" in page and "<b>HIV" not in page, path


async def test_a_series_of_chunks_has_its_pages(client: httpx.AsyncClient) -> None:
    await create_series(client, "chunks", method="disassociation", params={"k": 3, "m": 2})
    response = await client.post(
        "/v1/series/chunks/releases?wait=true&label=2023",
        content=(ROOT / "examples" / "prison-2023.dat").read_bytes(),
        headers={**ADMIN, "Content-Type": "text/plain"},
    )
    assert response.status_code == 201, response.text
    web = await signed_in(client, ADMIN_KEY)
    series = await web.get("/web/series/chunks")
    assert series.status_code == 200
    assert 'data-conclusion="not_applicable"' in series.text
    release = await web.get("/web/series/chunks/releases/1")
    assert release.status_code == 200 and "publishes chunks" in release.text
    counts = await web.get("/web/series/chunks/counts")
    assert counts.status_code == 404 and "chunks, not rows" in counts.text
    download = await web.get("/web/series/chunks/releases/1/release.json")
    api = await client.get("/v1/series/chunks/releases/1", headers=ADMIN)
    assert download.content == api.content


async def test_a_release_or_series_that_does_not_exist_is_a_404_page(
    client: httpx.AsyncClient,
) -> None:
    await publish_example(client, ("2022",))
    web = await signed_in(client, ADMIN_KEY)
    for path in (
        f"/web/series/{SERIES}/releases/9",
        f"/web/series/{SERIES}/releases/0",
        f"/web/series/{SERIES}/releases/x",
        "/web/series/nothing",
        "/web/jobs/0b6f5c1e-9d7a-4c57-8f0e-3c1d2a9b8e71",
        "/web/jobs/not-a-uuid",
    ):
        response = await web.get(path)
        assert response.status_code == 404, path
        assert 'data-status="404"' in response.text


async def test_a_verdict_still_computing_says_so_and_the_page_reloads(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = await publish_example(client, ("2022",))
    release = asyncio.Event()

    async def slow(*args: object) -> Verdict:
        await release.wait()
        return Verdict(
            conclusion="pass", releases=[], breaches=[], disagreements=[], draws=16, seconds=0
        )

    verdict.clear_verdicts()
    monkeypatch.setattr(verdict, "_compute", slow)
    monkeypatch.setattr(pages, "VERDICT_WAIT_S", 0.05)
    web = await signed_in(client, keys["auditor"])
    try:
        first = (await web.get(f"/web/series/{SERIES}")).text
        assert 'data-conclusion="pending"' in first
        assert '<meta http-equiv="refresh" content="5">' in first
        release.set()
        await asyncio.sleep(0.05)
        second = (await web.get(f"/web/series/{SERIES}")).text
        assert 'data-conclusion="pass"' in second and 'http-equiv="refresh"' not in second
    finally:
        release.set()
        verdict.clear_verdicts()


async def test_the_service_s_address_and_web_s_lead_to_the_series(
    client: httpx.AsyncClient,
) -> None:
    """docs/web.md's address ``/web/``, ``/web`` and the service's own ``/``."""
    web = browser(client)
    for path in ("/", "/web", "/web/"):
        response = await web.get(path)
        assert response.status_code == 303, path
        assert response.headers["location"] == "/web/series", path
        assert response.headers["cache-control"] == "no-store", path
    landed = await web.get("/web/", follow_redirects=True)
    assert landed.status_code == 200 and 'id="key"' in landed.text  # the sign-in form
    signed = await signed_in(client, ADMIN_KEY)
    listed = await signed.get("/", follow_redirects=True)
    assert listed.status_code == 200 and "<h1>Series</h1>" in listed.text

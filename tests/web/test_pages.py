"""Pages in the cases the example series does not reach: names that are markup, a method
that publishes chunks, a release that does not exist, a verdict still being computed."""

from __future__ import annotations

import asyncio
import html
import re

import httpx
import pytest

from app.schemas.overview import Verdict
from app.services import verdict
from app.web import pages
from tests.api.conftest import ADMIN, create_key, create_series, wait_job
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


def _chip(page: str, phase: str) -> str:
    found = re.search(rf'<li data-phase="{phase}"[^>]*>.*?</li>', page, re.S)
    assert found, phase
    return found.group(0)


async def test_the_attack_chip_is_green_only_when_an_audit_ran(client: httpx.AsyncClient) -> None:
    keys = await publish_example(client, ("2022",))
    auditor = await signed_in(client, keys["auditor"])
    series = (await auditor.get(f"/web/series/{SERIES}")).text
    job = series.split('data-job="')[1].split('"')[0]
    page = (await auditor.get(f"/web/jobs/{job}")).text
    assert 'class="done"' in _chip(page, "store")
    attack = _chip(page, "attack")
    assert 'class="skipped"' in attack and "not run" in attack and "no semantic audit" in attack
    await create_series(
        client, "audited", params={"r_th": 2, "semantic_audit": {"selection": ["aba"]}}
    )
    posted = await client.post(
        "/v1/series/audited/releases",
        content=(ROOT / "examples" / "prison-2022.dat").read_bytes(),
        headers={**ADMIN, "Content-Type": "text/plain"},
    )
    assert posted.status_code == 202, posted.text
    finished = await wait_job(client, posted.json()["id"], ADMIN)
    assert finished["status"] == "succeeded", finished
    # Its attack report is there: the audit ran.
    attacks = await client.get("/v1/series/audited/releases/1/attacks", headers=ADMIN)
    assert attacks.status_code == 200, attacks.text
    publisher = (await create_key(client, "publisher", "audited"))["Authorization"]
    publisher_key = publisher.removeprefix("Bearer ")
    for key in (ADMIN_KEY, keys["auditor"]):
        web = await signed_in(client, key)
        audited = await web.get(f"/web/jobs/{finished['id']}")
        if audited.status_code == 403:  # the walkthrough's auditor is scoped to its series
            continue
        assert 'class="done"' in _chip(audited.text, "attack")
        assert "not run" not in audited.text
    # A publisher (no timings) is told what the series asks for.
    mine = await client.post(
        "/v1/series/audited/releases",
        content=(ROOT / "examples" / "prison-2023.dat").read_bytes(),
        headers={"Authorization": publisher, "Content-Type": "text/plain"},
    )
    assert mine.status_code == 202, mine.text
    assert (await wait_job(client, mine.json()["id"], ADMIN))["status"] == "succeeded"
    web = await signed_in(client, publisher_key)
    own = (await web.get(f"/web/jobs/{mine.json()['id']}")).text
    assert 'class="done"' in _chip(own, "attack")


def _tables(page: str) -> list[str]:
    return re.findall(r'<table class="data"[^>]*>.*?</table>', page, re.S)


async def test_no_table_shows_only_its_header(client: httpx.AsyncClient) -> None:
    """A release with no private copy, a page past the last cluster or row: each table
    says what it would list, in a row of its own."""
    await create_series(client, "absent", private_terms=["not-in-any-row"], params={"r_th": 2})
    posted = await client.post(
        "/v1/series/absent/releases?wait=true",
        content=(ROOT / "examples" / "prison-2022.dat").read_bytes(),
        headers={**ADMIN, "Content-Type": "text/plain"},
    )
    assert posted.status_code == 201, posted.text
    auditor_key = (await create_key(client, "auditor"))["Authorization"].removeprefix("Bearer ")
    analyst_key = (await create_key(client, "analyst"))["Authorization"].removeprefix("Bearer ")
    release = "/web/series/absent/releases/1"
    for key in (auditor_key, analyst_key):
        web = await signed_in(client, key)
        for path in (
            "/web/series/absent",
            release,
            f"{release}?page=99&rows_from=100000",
            "/web/series/absent/counts",
        ):
            response = await web.get(path)
            assert response.status_code == 200, path
            for table in _tables(response.text):
                body = table.split("<tbody>", 1)[1]
                assert "<tr" in body, (path, table[:120])
        past = (await web.get(f"{release}?page=99&rows_from=100000")).text
        assert "No cluster on this page" in past
        assert "This release publishes no copy of a private term." in past
    past = (await (await signed_in(client, auditor_key)).get(f"{release}?rows_from=100000")).text
    assert "No row from here" in past


async def test_a_row_whose_public_terms_were_removed_says_so(client: httpx.AsyncClient) -> None:
    await create_series(client, params={"r_th": 2})
    snapshot = (ROOT / "examples" / "prison-2022.dat").read_text() + "HIV\ncancer\nHIV herpes\n"
    posted = await client.post(
        f"/v1/series/{SERIES}/releases?wait=true",
        content=snapshot.encode(),
        headers={**ADMIN, "Content-Type": "text/plain"},
    )
    assert posted.status_code == 201, posted.text
    document = (await client.get(f"/v1/series/{SERIES}/releases/1", headers=ADMIN)).json()
    empty = sum(row == [] for c in document["clusters"] for row in c["rows"])
    assert empty >= 1  # rows of private terms only: their public part is empty
    web = await signed_in(client, ADMIN_KEY)
    page = (await web.get(f"/web/series/{SERIES}/releases/1")).text
    assert "<li></li>" not in page and "<td></td>" not in page.split('id="row-risk"')[1]
    clusters = page.split('id="clusters"')[1]
    assert clusters.count("no public term") == empty
    riskiest = page.split('id="row-risk"')[1].split("</table>")[0]
    assert riskiest.count("no public term") == empty


def _text(page: str) -> str:
    """What a reader sees of the page: its text, cells and blocks apart (``|``), inline
    markup gone."""
    blocks = re.sub(r"</?(?:td|th|tr|li|dd|dt|p|h\d|div)\b[^>]*>", " | ", page)
    return html.unescape(" ".join(re.sub(r"<[^>]+>", " ", blocks).split()))


async def test_a_term_and_its_count_are_separated(client: httpx.AsyncClient) -> None:
    """Item ids as terms (BMS-WebView's): "10853: 3", never "10853 3"."""
    snapshot = (ROOT / "examples" / "prison-2022.dat").read_text().split()
    ids = {term: str(10_000 + i) for i, term in enumerate(sorted(set(snapshot)))}
    private = [ids["HIV"], ids["cancer"], ids["herpes"]]
    # The paper's mode, which publishes copies of private terms in the first release.
    await create_series(client, "items", private_terms=private)
    lines = (ROOT / "examples" / "prison-2022.dat").read_text().splitlines()
    body = "".join(" ".join(ids[t] for t in line.split()) + "\n" for line in lines)
    posted = await client.post(
        "/v1/series/items/releases?wait=true",
        content=body.encode(),
        headers={**ADMIN, "Content-Type": "text/plain"},
    )
    assert posted.status_code == 201, posted.text
    document = (await client.get("/v1/series/items/releases/1", headers=ADMIN)).json()
    web = await signed_in(client, ADMIN_KEY)
    for path in ("/web/series/items", "/web/series/items/releases/1"):
        page = (await web.get(path)).text
        for span in re.findall(r'<span data-term="(\d+)" data-value="(\d+)">([^<]*)</span>', page):
            term, value, shown = span
            assert shown == f"{term}: {value}", (path, span)
        # No private term is followed by a bare number anywhere on the page.
        for term in private:
            assert not re.search(rf"\b{term} \d", _text(page)), (path, term)
    cluster = next(c for c in document["clusters"] if c["private_terms"])
    term, n = next(iter(cluster["private_terms"].items()))
    release = _text((await web.get("/web/series/items/releases/1")).text)
    assert f"{term}: {n}" in release

"""Roles as in the API (docs/api.md "Roles and keys"): what a role may not read is not in
the page's HTML either. Auditors and admins read risk, per-row risk, covers, suppression,
escalation, verify's verdict and every job; a publisher the jobs its key posted; an
analyst the public figures only; a scoped key its own series."""

from __future__ import annotations

import html
import re

import httpx
import pytest

from tests.api.conftest import ADMIN, create_key, create_series
from tests.support.database import ROOT
from tests.web.support import SERIES, publish_example, signed_in

pytestmark = [pytest.mark.anyio, pytest.mark.db]

#: Markers of what only auditors and admins read, as the pages print them.
AUDITORS_ONLY = (
    'id="verdict"',
    'data-field="max_serial_risk"',
    'data-field="rows_over_threshold"',
    'data-field="suppressed"',
    'data-field="escalation"',
    'id="risk"',
    'id="row-risk"',
    'id="cover"',
    "Serial risk",
)


async def test_an_analyst_reads_the_public_figures_and_nothing_of_the_risk(
    client: httpx.AsyncClient,
) -> None:
    keys = await publish_example(client)
    risk = (await client.get(f"/v1/series/{SERIES}/risk", headers=ADMIN)).json()
    analyst = await signed_in(client, keys["analyst"])
    auditor = await signed_in(client, keys["auditor"])
    for path in (f"/web/series/{SERIES}", f"/web/series/{SERIES}/releases/2"):
        shown, full = await analyst.get(path), await auditor.get(path)
        assert shown.status_code == full.status_code == 200
        assert 'data-field="n_rows"' in shown.text
        for marker in AUDITORS_ONLY:
            assert marker not in shown.text, (path, marker)
        assert 'id="jobs"' not in shown.text
        assert any(marker in full.text for marker in AUDITORS_ONLY), path
    page = (await auditor.get(f"/web/series/{SERIES}")).text
    analyst_page = (await analyst.get(f"/web/series/{SERIES}")).text
    for r in risk:
        assert f'data-value="{r["max_serial_risk"]}"' in page
        assert f'data-value="{r["max_serial_risk"]}"' not in analyst_page


async def test_a_publisher_follows_its_own_jobs_only(client: httpx.AsyncClient) -> None:
    keys = await publish_example(client, ("2022",))
    other = (await create_key(client, "publisher", SERIES))["Authorization"]
    posted = await client.post(
        f"/v1/series/{SERIES}/releases?wait=true&label=other",
        content=(ROOT / "examples" / "prison-2023.dat").read_bytes(),
        headers={"Authorization": other, "Content-Type": "text/plain"},
    )
    assert posted.status_code == 201, posted.text
    theirs = posted.json()["job"]["id"]
    publisher = await signed_in(client, keys["publisher"])
    page = (await publisher.get(f"/web/series/{SERIES}")).text
    assert "Your jobs" in page and page.count("data-job=") == 1
    assert theirs not in page
    refused = await publisher.get(f"/web/jobs/{theirs}")
    assert refused.status_code == 403 and "auditors and admins read it" in refused.text
    assert (await publisher.get(f"/web/jobs/{theirs}/progress")).status_code == 403
    for marker in AUDITORS_ONLY:
        assert marker not in page, marker
    auditor = await signed_in(client, keys["auditor"])
    everything = (await auditor.get(f"/web/series/{SERIES}")).text
    assert everything.count("data-job=") == 2 and theirs in everything
    job = await auditor.get(f"/web/jobs/{theirs}")
    assert job.status_code == 200 and 'id="phase-seconds"' in job.text
    mine = await publisher.get(f"/web/series/{SERIES}")
    own = mine.text.split('data-job="')[1].split('"')[0]
    own_page = await publisher.get(f"/web/jobs/{own}")
    # Its own job, as GET /v1/jobs/{id} shows it to the poster: no report, no timings.
    assert own_page.status_code == 200 and 'id="phase-seconds"' not in own_page.text


async def test_an_analyst_reads_no_job(client: httpx.AsyncClient) -> None:
    keys = await publish_example(client, ("2022",))
    listed = await client.get("/v1/series/prison-health/risk", headers=ADMIN)
    assert listed.status_code == 200
    auditor = await signed_in(client, keys["auditor"])
    job = (await auditor.get(f"/web/series/{SERIES}")).text.split('data-job="')[1].split('"')[0]
    analyst = await signed_in(client, keys["analyst"])
    assert (await analyst.get(f"/web/jobs/{job}")).status_code == 403


async def test_a_scoped_key_reads_its_own_series_only(client: httpx.AsyncClient) -> None:
    keys = await publish_example(client, ("2022",))
    await create_series(client, "another", params={"r_th": 2})
    analyst = await signed_in(client, keys["analyst"])
    listing = (await analyst.get("/web/series")).text
    assert f'data-series="{SERIES}"' in listing and 'data-series="another"' not in listing
    for path in ("/web/series/another", "/web/series/another/counts"):
        refused = await analyst.get(path)
        assert refused.status_code == 403, path
        assert "scoped to series" in refused.text


async def test_a_withdrawn_release_is_gone_for_analysts_but_not_for_auditors(
    client: httpx.AsyncClient,
) -> None:
    keys = await publish_example(client, ("2022", "2023"))
    withdrawn = await client.post(
        f"/v1/series/{SERIES}/releases/2/withdraw", json={"reason": "wrong file"}, headers=ADMIN
    )
    assert withdrawn.status_code == 200, withdrawn.text
    analyst = await signed_in(client, keys["analyst"])
    auditor = await signed_in(client, keys["auditor"])
    base = f"/web/series/{SERIES}/releases"
    for path in (f"{base}/2", f"{base}/2/release.json", f"{base}/2/supports.csv"):
        gone = await analyst.get(path)
        assert gone.status_code == 410, (path, gone.status_code)
        assert "wrong file" in gone.text
        assert (await auditor.get(path)).status_code == 200, path
    assert (await analyst.get(f"{base}/1")).status_code == 200


def _links(page: str) -> set[str]:
    return {
        html.unescape(href)
        for href in re.findall(r'href="(/web/[^"]*)"', page)
        if not href.startswith("/web/static/")
    }


async def test_a_withdrawn_release_is_marked_wherever_it_is_listed(
    client: httpx.AsyncClient,
) -> None:
    keys = await publish_example(client, ("2022", "2023"))
    withdrawn = await client.post(
        f"/v1/series/{SERIES}/releases/2/withdraw", json={"reason": "wrong file"}, headers=ADMIN
    )
    assert withdrawn.status_code == 200
    gone = f"/web/series/{SERIES}/releases/2"
    readers = {role: await signed_in(client, keys[role]) for role in ("analyst", "publisher")}
    for role, web in readers.items():
        series = (await web.get(f"/web/series/{SERIES}")).text
        row = series.split('<tr data-release="2"')[1].split("</tr>")[0]
        assert 'class="withdrawn"' in row and "wrong file" in row, role
        assert f'href="{gone}"' not in series, role  # in the table and the chart
        # Its body's figures are not shown to a reader the API answers 410.
        assert 'data-value=""' in row and "—" in row, role
        counts = (await web.get(f"/web/series/{SERIES}/counts?term=HIV")).text
        counted = counts.split('<tr data-release="2"')[1].split("</tr>")[0]
        assert "withdrawn" in counted and 'data-field="published"' not in counted, role
        assert counts.count('class="point"') == 1, role
        # No link on these pages leads to a 410.
        for link in _links(series) | _links(counts):
            assert (await web.get(link)).status_code != 410, (role, link)
    # The publisher's own job names its release withdrawn, without a link to it.
    publisher = readers["publisher"]
    series = (await publisher.get(f"/web/series/{SERIES}")).text
    job_row = next(r for r in series.split('<tr data-job="')[1:] if ">2 <span" in r)
    job_id = job_row.split('"', 1)[0]
    job = await publisher.get(f"/web/jobs/{job_id}")
    assert 'data-field="withdrawn"' in job.text and f'href="{gone}"' not in job.text
    # Auditors read it, marked, and its page says so.
    auditor = await signed_in(client, keys["auditor"])
    series = (await auditor.get(f"/web/series/{SERIES}")).text
    row = series.split('<tr data-release="2"')[1].split("</tr>")[0]
    assert "withdrawn" in row and f'href="{gone}"' in row
    release = await auditor.get(gone)
    assert release.status_code == 200
    assert 'data-field="withdrawn"' in release.text and "wrong file" in release.text
    assert 'data-category="2 withdrawn"' in series

"""The web view's figures are the API's: each release's rows, counterfeit rows, private
copies and guarantee as its public JSON prints them, its risk as ``GET …/risk`` answers,
a term's count and interval as the analyst's reader (``app.analysis``) reads the public
files, the downloads as ``GET …/releases/{no}`` and ``serialpub export`` give them, and the
verdict as ``serialpub verify`` concludes on the same files."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from app.analysis import load_series, term_count
from app.cli import cli
from tests.api.conftest import ADMIN
from tests.web.support import SERIES, publish_example, signed_in

pytestmark = [pytest.mark.anyio, pytest.mark.db]


def rows_of(page: str, attribute: str) -> dict[str, str]:
    """Each ``<tr {attribute}="...">`` of the page, by that value."""
    parts = page.split(f'<tr {attribute}="')[1:]
    return {part.split('"', 1)[0]: part.split("</tr>", 1)[0] for part in parts}


def cell(row: str, field: str) -> str:
    found = re.search(rf'data-field="{field}"[^>]*>(.*?)</t[dh]>', row, re.S)
    assert found, f"no {field} in {row[:200]}"
    text = re.sub(r"<[^>]+>", " ", found.group(1))
    return html.unescape(" ".join(text.split()))


def number(text: str) -> float | None:
    first = text.split()[0] if text.split() else ""
    return None if first == "—" else float("inf") if first == "∞" else float(first.replace(",", ""))


async def _documents(client: httpx.AsyncClient, tmp: Path) -> list[dict[str, Any]]:
    """The public releases as the API serves them, written where the CLI reads them."""
    listed = (await client.get(f"/v1/series/{SERIES}/releases", headers=ADMIN)).json()
    documents = []
    for item in listed:
        no = item["release_no"]
        response = await client.get(f"/v1/series/{SERIES}/releases/{no}", headers=ADMIN)
        (tmp / f"release-{no:03d}.json").write_bytes(response.content)
        documents.append(response.json())
    return documents


async def test_the_series_page_prints_each_release_as_the_api_does(
    client: httpx.AsyncClient, tmp_path: Path
) -> None:
    keys = await publish_example(client)
    documents = await _documents(client, tmp_path)
    risk = (await client.get(f"/v1/series/{SERIES}/risk", headers=ADMIN)).json()
    web = await signed_in(client, keys["auditor"])
    rows = rows_of((await web.get(f"/web/series/{SERIES}")).text, "data-release")
    assert sorted(rows) == [str(d["release_no"]) for d in documents]
    for document, summary in zip(documents, risk, strict=True):
        row = rows[str(document["release_no"])]
        assert number(cell(row, "n_rows")) == document["n_rows"]
        assert number(cell(row, "counterfeit_rows")) == document["counterfeit_rows"]
        copies: dict[str, int] = dict(document["global_bag"])
        for cluster in document["clusters"]:
            for term, n in cluster["private_terms"].items():
                copies[term] = copies.get(term, 0) + n
        assert number(cell(row, "private_copies")) == sum(copies.values())
        for term, n in copies.items():
            if n:
                assert f'data-term="{term}" data-value="{n}"' in row, term
        assert cell(row, "guarantee") == document["guarantee"]
        assert f'data-value="{summary["max_serial_risk"]}"' in row
        assert number(cell(row, "rows_over_threshold")) == summary["rows_over_threshold"]


async def test_a_term_s_counts_are_the_analyst_reader_s(
    client: httpx.AsyncClient, tmp_path: Path
) -> None:
    keys = await publish_example(client)
    await _documents(client, tmp_path)
    releases = load_series(tmp_path)
    web = await signed_in(client, keys["analyst"])
    for term in ("HIV", "cancer", "herpes"):
        page = (await web.get(f"/web/series/{SERIES}/counts", params={"term": term})).text
        assert f'data-term="{term}"' in page
        rows = rows_of(page, "data-release")
        assert len(rows) == len(releases)
        for release in releases:
            estimate = term_count(release, term)
            row = rows[str(release.release_no)]
            assert number(cell(row, "published")) == estimate.published
            assert number(cell(row, "low")) == estimate.low
            assert number(cell(row, "high")) == estimate.high
            # The chart draws the same figures.
            assert f'data-low="{estimate.low:g}" data-high="{estimate.high:g}"' in page


async def test_the_downloads_are_the_api_s_and_the_export_s(
    client: httpx.AsyncClient, tmp_path: Path
) -> None:
    keys = await publish_example(client)
    await _documents(client, tmp_path)
    web = await signed_in(client, keys["analyst"])
    base = f"/web/series/{SERIES}/releases/2"
    for file, fmt in (("release.json", "json"), ("release.ndjson", "ndjson")):
        mine = await web.get(f"{base}/{file}")
        api = await client.get(f"/v1/series/{SERIES}/releases/2?format={fmt}", headers=ADMIN)
        assert mine.status_code == 200 and mine.content == api.content
        assert mine.headers["content-disposition"] == f'attachment; filename="{SERIES}-2-{file}"'
        assert mine.headers["cache-control"] == "no-store"
    exported = CliRunner().invoke(
        cli, ["export", str(tmp_path), "--format", "supports", "--release", "2"]
    )
    assert exported.exit_code == 0, exported.output
    supports = await web.get(f"{base}/supports.csv")
    assert supports.status_code == 200 and supports.text == exported.stdout
    assert (await web.get(f"{base}/other.txt")).status_code == 404


async def test_the_verdict_is_serialpub_verify_s(client: httpx.AsyncClient, tmp_path: Path) -> None:
    keys = await publish_example(client)
    await _documents(client, tmp_path)
    verified = CliRunner().invoke(cli, ["verify", str(tmp_path)])
    report = json.loads(verified.stdout)
    web = await signed_in(client, keys["auditor"])
    page = (await web.get(f"/web/series/{SERIES}")).text
    expected = {0: "pass", 1: "breach", 3: "disagreement"}[verified.exit_code]
    assert f'data-conclusion="{expected}"' in page
    breaches = page.split('id="breaches"')[1].split("</table>")[0] if expected == "breach" else ""
    assert breaches.count("<tr><td>") == len(report["public_breaches"])


async def test_the_release_page_shows_the_analyst_s_clusters_and_the_auditor_s_rows(
    client: httpx.AsyncClient,
) -> None:
    keys = await publish_example(client)
    document = (await client.get(f"/v1/series/{SERIES}/releases/3", headers=ADMIN)).json()
    rows = (
        await client.get(f"/v1/series/{SERIES}/releases/3/risk/rows?limit=10000", headers=ADMIN)
    ).json()
    web = await signed_in(client, keys["auditor"])
    page = (await web.get(f"/web/series/{SERIES}/releases/3")).text
    clusters = rows_of(page, "data-cluster")
    assert list(clusters) == [c["cluster_id"] for c in document["clusters"]]
    for c in document["clusters"]:
        assert number(cell(clusters[c["cluster_id"]], "rows")) == len(c["rows"])
        for term, n in c["private_terms"].items():
            assert f'data-term="{term}" data-value="{n}"' in clusters[c["cluster_id"]]
    riskiest = sorted(rows["rows"], key=lambda r: -r["serial_risk"])
    table = page.split('id="row-risk"')[1].split("</table>")[0]
    shown = re.findall(r'class="num" data-value="([^"]+)"', table)
    assert [float(v) for v in shown] == [r["serial_risk"] for r in riskiest[:100]]

"""End to end over HTTP: the paper's worked example, roles, formats, dry runs."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.api.conftest import ADMIN, PAPER_PARAMS, create_key, create_series, wait_job
from tests.api.paper import PRIVATE, TABLE_4A, body, text_plain

pytestmark = [pytest.mark.anyio, pytest.mark.db]


def _normalised(release: dict) -> list[tuple[list[list[str]], dict[str, int]]]:
    clusters = [
        (
            sorted(sorted(row) for row in c["rows"]),
            {s: n for s, n in c["private_terms"].items() if n},
        )
        for c in release["clusters"]
    ]
    return sorted(clusters, key=lambda c: c[0])


async def test_paper_example_end_to_end(client: httpx.AsyncClient) -> None:
    await create_series(client)
    await create_series(client, name="other-series")
    publisher = await create_key(client, "publisher", "prison-health")
    analyst = await create_key(client, "analyst")
    auditor = await create_key(client, "auditor")
    stranger = await create_key(client, "publisher", "other-series")

    for release in (1, 2, 3):
        response = await client.post(
            "/v1/series/prison-health/releases?wait=true", json=body(release), headers=publisher
        )
        assert response.status_code == 201, response.text
        assert response.json()["release"]["release_no"] == release
        assert response.json()["risk"]["max_serial_risk"] <= 2 + 1e-9

    first = (await client.get("/v1/series/prison-health/releases/1", headers=analyst)).json()
    assert _normalised(first) == sorted(TABLE_4A["clusters"], key=lambda c: c[0])
    assert {s: n for s, n in first["global_bag"].items() if n} == TABLE_4A["global_bag"]
    assert first["label"] == "2023" and first["n_rows"] == 6

    risks = await client.get("/v1/series/prison-health/risk", headers=auditor)
    assert risks.status_code == 200
    assert [r["release_no"] for r in risks.json()] == [1, 2, 3]
    assert all(r["max_serial_risk"] <= 2 + 1e-9 for r in risks.json())
    assert all(r["rows_over_threshold"] == 0 for r in risks.json())

    listed = await client.get("/v1/series/prison-health/releases", headers=analyst)
    assert [r["release_no"] for r in listed.json()] == [1, 2, 3]
    forbidden = await client.get("/v1/series/prison-health/releases/1/risk", headers=analyst)
    assert forbidden.status_code == 403
    assert forbidden.json()["error"]["code"] == "forbidden"
    posted = await client.post("/v1/series/prison-health/releases", json=body(1), headers=stranger)
    assert posted.status_code == 403
    assert len((await client.get("/v1/series/prison-health/releases", headers=analyst)).json()) == 3


async def test_analyst_view_has_no_private_columns(client: httpx.AsyncClient) -> None:
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    analyst = await create_key(client, "analyst")
    for release in (1, 2):
        response = await client.post(
            "/v1/series/prison-health/releases?wait=true", json=body(release), headers=publisher
        )
        assert response.status_code == 201, response.text
    release = (await client.get("/v1/series/prison-health/releases/2", headers=analyst)).json()
    assert set(release) == {
        "series",
        "release_no",
        "label",
        "method",
        "guarantee",
        "params",
        "n_rows",
        "population_rates",
        "global_bag",
        "global_counterfeits",
        "counterfeit_rows",
        "suppression_beyond_budget",
        "clusters",
    }
    for cluster in release["clusters"]:
        assert set(cluster) == {
            "cluster_id",
            "rows",
            "private_terms",
            "global_share",
            "counterfeits",
        }
        assert all(isinstance(row, list) for row in cluster["rows"])
    assert "fp2" not in str(release).lower()
    job = response.json()["job"]
    assert job["report"] is None and job["phase_seconds"] is None
    assert response.json()["risk"]["perturbation"]["published_only"] is True


async def test_job_lifecycle_and_auditor_details(client: httpx.AsyncClient) -> None:
    await create_series(client)
    publisher = await create_key(client, "publisher")
    auditor = await create_key(client, "auditor")
    analyst = await create_key(client, "analyst")
    response = await client.post(
        "/v1/series/prison-health/releases", json=body(1), headers=publisher
    )
    assert response.status_code == 202
    job = response.json()
    assert job["status"] in ("queued", "running", "succeeded") and job["series"] == "prison-health"
    done = await wait_job(client, job["id"], publisher)
    assert done["status"] == "succeeded" and done["release_no"] == 1
    assert done["progress"] == 1.0 and done["finished_at"] is not None
    detailed = (await client.get(f"/v1/jobs/{job['id']}", headers=auditor)).json()
    assert detailed["report"] is not None and "store" in detailed["phase_seconds"]
    # In copies, what analysts read: true against published private copies.
    copies = detailed["report"]["private_copies"]
    assert {"true", "published", "distortion", "net", "terms_off", "worst"} <= set(copies)
    assert copies["true"] > 0 and copies["distortion"] >= 0
    # The API's time to receive and parse the body opens the job's phases; the worker's follow.
    assert {"upload+parse", "load", "prepare", "ipc", "store"} <= set(detailed["phase_seconds"])
    assert (await client.get(f"/v1/jobs/{job['id']}", headers=analyst)).status_code == 403
    other = await create_key(client, "publisher")
    assert (await client.get(f"/v1/jobs/{job['id']}", headers=other)).status_code == 403


async def test_text_plain_with_query_label_and_private_terms(client: httpx.AsyncClient) -> None:
    await create_series(client, params={**PAPER_PARAMS, "seed": 0})
    publisher = await create_key(client, "publisher", "prison-health")
    response = await client.post(
        "/v1/series/prison-health/releases?wait=true&label=y1&private_terms=fraud",
        content=text_plain(1),
        headers={**publisher, "Content-Type": "text/plain"},
    )
    assert response.status_code == 201, response.text
    assert response.json()["release"]["label"] == "y1"
    series = (await client.get("/v1/series/prison-health", headers=publisher)).json()
    assert "fraud" in series["private_terms"] and series["n_releases"] == 1
    release = (await client.get("/v1/series/prison-health/releases/1", headers=publisher)).json()
    assert all("fraud" not in row for c in release["clusters"] for row in c["rows"])


async def test_csv_upload(client: httpx.AsyncClient) -> None:
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    lines = ["terms,cluster"] + [
        f'"{";".join(t["terms"])}",{t["cluster"]}' for t in body(1)["transactions"]
    ]
    response = await client.post(
        "/v1/series/prison-health/releases?wait=true",
        content="\n".join(lines) + "\n",
        headers={**publisher, "Content-Type": "text/csv; charset=utf-8"},
    )
    assert response.status_code == 201, response.text
    release = (await client.get("/v1/series/prison-health/releases/1", headers=publisher)).json()
    assert _normalised(release) == sorted(TABLE_4A["clusters"], key=lambda c: c[0])


async def test_ndjson_streams_header_then_clusters(client: httpx.AsyncClient) -> None:
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    await client.post(
        "/v1/series/prison-health/releases?wait=true", json=body(1), headers=publisher
    )
    whole = (await client.get("/v1/series/prison-health/releases/1", headers=publisher)).json()
    response = await client.get(
        "/v1/series/prison-health/releases/1?format=ndjson", headers=publisher
    )
    assert response.headers["content-type"].startswith("application/x-ndjson")
    import json

    lines = [json.loads(line) for line in response.text.splitlines()]
    assert "clusters" not in lines[0]
    assert {**lines[0], "clusters": lines[1:]} == whole


async def test_dry_run_stores_nothing(client: httpx.AsyncClient) -> None:
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    response = await client.post(
        "/v1/series/prison-health/releases?dry_run=true&wait=true", json=body(1), headers=publisher
    )
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["dry_run"] is True and result["job"] is None
    assert result["release"]["release_no"] == 1 and result["release"]["n_rows"] == 6
    assert result["risk"]["max_serial_risk"] <= 2 + 1e-9
    listed = await client.get("/v1/series/prison-health/releases", headers=publisher)
    assert listed.json() == []


async def test_cover_and_risk_rows(client: httpx.AsyncClient) -> None:
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    auditor = await create_key(client, "auditor")
    for release in (1, 2):
        await client.post(
            "/v1/series/prison-health/releases?wait=true", json=body(release), headers=publisher
        )
    cover = await client.get("/v1/series/prison-health/releases/1/cover", headers=auditor)
    assert cover.status_code == 200
    assert cover.json() and all(e["other_release"] == 2 for e in cover.json())
    assert all(
        set(e) == {"cluster_id", "other_release", "other_cluster_id", "size", "ranges"}
        for e in cover.json()
    )
    rows = await client.get(
        "/v1/series/prison-health/releases/1/risk/rows?offset=1&limit=2", headers=auditor
    )
    page = rows.json()
    assert page["total"] == 6 and len(page["rows"]) == 2 and page["offset"] == 1
    assert all(r["serial_risk"] <= 2 + 1e-9 for r in page["rows"])
    summary = await client.get("/v1/series/prison-health/releases/1/risk", headers=auditor)
    assert summary.json()["perturbation"]["published_only"] is False
    assert set(summary.json()["by_term"]) <= set(PRIVATE)


async def test_missing_release_and_series_are_404(client: httpx.AsyncClient) -> None:
    await create_series(client)
    analyst = await create_key(client, "analyst")
    missing = await client.get("/v1/series/prison-health/releases/9", headers=analyst)
    assert missing.status_code == 404 and missing.json()["error"]["details"]["release_no"] == 9
    assert (await client.get("/v1/series/nope", headers=analyst)).status_code == 404
    assert (await client.get("/v1/series/nope/releases", headers=ADMIN)).status_code == 404


def _grown_body(release: int, private_terms: list[str] | None = None) -> dict:
    """Twelve prisoners; ``mansl`` (and its spelling ``Mansl``) in clear on several rows."""
    offences = [["theft", "arson"], ["abuse", "arson"], ["DUI", "assault"], ["vandal"]]
    transactions = []
    for i in range(12):
        terms = [*offences[(i + release) % 4]]
        if i % 3 == 0:
            terms.append("mansl" if i % 2 else "Mansl")
        if i % 4 == 1:
            terms.append("HIV")
        transactions.append({"terms": terms, "individual": f"p{i + 2 * release}"})
    body: dict = {"label": f"y{release}", "transactions": transactions}
    if private_terms:
        body["private_terms"] = private_terms
    return body


def _held(release: dict, term: str) -> int:
    return sum(
        1
        for c in release["clusters"]
        for row in c["rows"]
        if any(t.casefold() == term for t in row)
    )


async def test_a_term_made_private_later_is_warned_of_and_never_printed_again(
    client: httpx.AsyncClient,
) -> None:
    """Release 1 prints ``mansl`` (and ``Mansl``) in clear; release 2 makes
    it private. The dry run and the publication warn that release 1 printed it, the job's
    report too; release 2 prints it in no row, in no spelling (the series matches spellings,
    casefold); the series' risk says which release printed it, in how many rows."""
    await create_series(
        client, private_terms=["HIV"], params={"r_th": 2, "cluster_size": 2, "seed": 7}
    )
    publisher = await create_key(client, "publisher", "prison-health")
    auditor = await create_key(client, "auditor")
    url = "/v1/series/prison-health/releases"
    first = await client.post(f"{url}?wait=true", json=_grown_body(1), headers=publisher)
    assert first.status_code == 201, first.text
    assert not [
        w for w in first.json()["warnings"] if w["code"] == "private_term_published_earlier"
    ]
    printed = _held((await client.get(f"{url}/1", headers=publisher)).json(), "mansl")
    assert printed >= 4  # the four true rows, and any counterfeit that copied one

    expected = {
        "code": "private_term_published_earlier",
        "term": "mansl",
        "releases": "1",
        "rows": str(printed),
    }
    dry = await client.post(
        f"{url}?dry_run=true&wait=true", json=_grown_body(2, ["mansl"]), headers=publisher
    )
    assert dry.status_code == 200, dry.text
    warned = [w for w in dry.json()["warnings"] if w["code"] == expected["code"]]
    assert [{k: w[k] for k in expected} for w in warned] == [expected]
    assert "release(s) 1 published it in clear" in warned[0]["message"]

    second = await client.post(
        f"{url}?wait=true", json=_grown_body(2, ["mansl"]), headers=publisher
    )
    assert second.status_code == 201, second.text
    warned = [w for w in second.json()["warnings"] if w["code"] == expected["code"]]
    assert [{k: w[k] for k in expected} for w in warned] == [expected]
    job = (await client.get(f"/v1/jobs/{second.json()['job']['id']}", headers=auditor)).json()
    assert [
        {k: w[k] for k in expected}
        for w in job["report"]["warnings"]
        if w["code"] == expected["code"]
    ] == [expected]
    assert expected["code"] in {w["code"] for w in job["warnings"]}
    release = (await client.get(f"{url}/2", headers=publisher)).json()
    assert _held(release, "mansl") == 0
    # Its copies are counted as a private term's, or withheld: a term entering the series
    # with few copies is not admitted under the default guarantee (design.md §5.8).
    assert (
        any(
            "mansl" in c["private_terms"] or "mansl" in c["global_share"]
            for c in release["clusters"]
        )
        or "mansl" in release["global_bag"]
        or "mansl" in job["report"]["not_admitted"]
    )

    risks = (await client.get("/v1/series/prison-health/risk", headers=auditor)).json()
    assert [r["private_terms_in_clear"] for r in risks] == [{"mansl": printed}, {}]
    one = (await client.get(f"{url}/1/risk", headers=auditor)).json()
    assert one["private_terms_in_clear"] == {"mansl": printed}

    # Release 3 makes nothing private: no warning again; the risk still says it.
    third = await client.post(f"{url}?wait=true", json=_grown_body(3), headers=publisher)
    assert third.status_code == 201, third.text
    assert expected["code"] not in {w["code"] for w in third.json()["warnings"]}
    assert _held((await client.get(f"{url}/3", headers=publisher)).json(), "mansl") == 0


async def test_a_disclosing_population_rate_is_warned_of(client: httpx.AsyncClient) -> None:
    """A one-line snapshot published population_rates {"HIV": 1.0} without a word: its
    lift is 1, within every r_th, yet it says that everyone in the snapshot has HIV."""
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    url = "/v1/series/prison-health/releases"
    one_line = {"transactions": [{"terms": ["theft", "HIV"]}]}
    for query in ("dry_run=true&wait=true", "wait=true"):
        response = await client.post(f"{url}?{query}", json=one_line, headers=publisher)
        assert response.status_code in (200, 201), response.text
        found = [
            w for w in response.json()["warnings"] if w["code"] == "disclosing_population_rate"
        ]
        assert [(w["term"], w["rate"]) for w in found] == [("HIV", "1")], response.json()
    ordinary = await client.post(f"{url}?wait=true", json=body(2), headers=publisher)
    assert ordinary.status_code == 201, ordinary.text
    assert not [w for w in ordinary.json()["warnings"] if w["code"] == "disclosing_population_rate"]


async def _three_releases(
    client: httpx.AsyncClient, params: dict
) -> list[tuple[dict, dict, httpx.Response, dict, dict]]:
    """The paper's three releases published under ``params``: per release the public JSON,
    the ledger, the NDJSON response and the risk summary, read with an auditor's key, and
    the publication's answer."""
    await create_series(client, params=params)
    publisher = await create_key(client, "publisher", "prison-health")
    auditor = await create_key(client, "auditor")
    read = []
    for release in (1, 2, 3):
        response = await client.post(
            "/v1/series/prison-health/releases?wait=true", json=body(release), headers=publisher
        )
        assert response.status_code == 201, response.text
        url = f"/v1/series/prison-health/releases/{release}"
        public = (await client.get(url, headers=auditor)).json()
        ledger = (await client.get(f"{url}/ledger", headers=auditor)).json()
        streamed = await client.get(f"{url}?format=ndjson", headers=auditor)
        risk = (await client.get(f"{url}/risk", headers=auditor)).json()
        read.append((public, ledger, streamed, risk, response.json()))
    return read


async def test_counts_by_release_publish_no_cluster_count(client: httpx.AsyncClient) -> None:
    # FP1 protects the clusters' counts: asked for beside "release", it is refused by name.
    refused = await client.post(
        "/v1/series",
        json={
            "name": "both",
            "method": "sanony",
            "private_terms": ["HIV"],
            "params": {"counterfeit_counts": "release", "forward_perturbation": True},
        },
        headers=ADMIN,
    )
    assert refused.status_code == 422
    assert refused.json()["error"]["details"]["param"] == "forward_perturbation"
    params = {**PAPER_PARAMS, "forward_perturbation": False, "counterfeit_counts": "release"}
    total = 0
    warned = 0
    for public, ledger, _, risk, posted in await _three_releases(client, params):
        assert public["params"]["counterfeit_counts"] == "release"
        flagged = sum(sum(c["counterfeit"]) for c in ledger["clusters"])
        # Every cluster publishes 0; the release's total counts every counterfeit row.
        assert all(c["counterfeits"] == 0 for c in public["clusters"])
        assert public["counterfeit_rows"] == flagged
        # The split by phase stays in the ledger, for auditors.
        assert sum(c["bp"] + c["fp1"] + c["fp2"] for c in ledger["clusters"]) == flagged
        # No cluster places any of them: the whole total is the adversary's to spread, and
        # the risk summary estimates what that gives it (docs/attacks.md).
        exposure = risk["published_total"]
        if flagged:
            n_rows = sum(len(c["rows"]) for c in public["clusters"])
            assert exposure["unattributed"] == exposure["published_total"] == flagged
            assert exposure["among"] == n_rows
            assert exposure["factor"] == pytest.approx(n_rows / (n_rows - flagged))
            assert exposure["max_serial_risk"] == pytest.approx(
                risk["max_serial_risk"] * exposure["factor"]
            )
            # The publisher is told when the estimate is material (2% over r_th).
            material = exposure["max_serial_risk"] > 1.02 * risk["r_th"]
            codes = [w["code"] for w in posted["warnings"]]
            assert ("published_total_exposure" in codes) == material
            warned += material
        else:
            assert exposure is None
        total += flagged
    assert total > 0  # the example does need counterfeits: the totals were tested
    assert warned  # and the warning was seen


async def test_counts_of_the_paper_publish_no_total(client: httpx.AsyncClient) -> None:
    params = {**PAPER_PARAMS, "counterfeit_counts": "paper"}
    for public, ledger, streamed, risk, _ in await _three_releases(client, params):
        # Nothing to estimate from: the risk summary says so.
        assert risk["published_total"] is None
        # No public total; each cluster counts its BP and FP1 rows, as the ledger splits them.
        assert public["counterfeit_rows"] is None
        assert public["params"]["counterfeit_counts"] == "paper"
        for cluster, split in zip(public["clusters"], ledger["clusters"], strict=True):
            assert cluster["counterfeits"] == split["bp"] + split["fp1"]
        assert json.loads(streamed.text.splitlines()[0])["counterfeit_rows"] is None

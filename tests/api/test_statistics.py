"""Wong's statistics file through the auditor endpoint (design.md §6)."""

from __future__ import annotations

import random

import httpx
import pytest

from tests.api.conftest import create_key, create_series

pytestmark = [pytest.mark.anyio, pytest.mark.db]


def _corpus(release: int) -> dict[str, object]:
    """30 people; HIV and cancer rare enough for groups that meet the ratio (about 7.7)."""
    rng = random.Random(release)
    terms = ["theft", "arson", "vandal", "abuse", "DUI", "assault", "fraud"]
    transactions = []
    for i in range(30):
        private = (["HIV"] if i % 10 == 1 else []) + (["cancer"] if i % 12 == 5 else [])
        transactions.append({"terms": rng.sample(terms, 2) + private, "individual": f"p-{i}"})
    return {"label": f"y{release}", "transactions": transactions}


async def test_statistics_file_is_kept_per_individual(
    client: httpx.AsyncClient, database_url: str
) -> None:
    import psycopg

    from app.db.embedded import libpq_url

    await create_series(
        client,
        name="w",
        method="wong",
        private_terms=["HIV", "cancer"],
        params={"l": 2, "cluster_size": 2, "strategy": "constant_ratio", "k_prime": 5},
    )
    publisher = await create_key(client, "publisher", "w")
    auditor = await create_key(client, "auditor")
    for release in (1, 2):
        response = await client.post(
            "/v1/series/w/releases?wait=true", json=_corpus(release), headers=publisher
        )
        assert response.status_code == 201, response.text
    found = await client.get("/v1/series/w/statistics?individual=p-1", headers=auditor)
    assert found.status_code == 200, found.text
    stats = found.json()
    assert stats["individual"] == "p-1" and stats["l"] == 2 and stats["threshold"] == 0.5
    assert "HIV" in stats["terms"], "p-1 holds HIV: its group statistics are on file"
    assert [e["release_no"] for e in stats["terms"]["HIV"]["entries"]] == [1, 2]
    assert stats["terms"]["HIV"]["breach_probability"] <= stats["threshold"]
    for term in stats["terms"].values():
        ratios = [1 - e["n_s"] / e["n"] for e in term["entries"]]
        expected = 1.0
        for r in ratios:
            expected *= r
        assert term["breach_probability"] == pytest.approx(1 - expected)
        assert [e["release_no"] for e in term["entries"]] == sorted(
            e["release_no"] for e in term["entries"]
        )
    async with await psycopg.AsyncConnection.connect(libpq_url(database_url)) as conn:
        cur = await conn.execute(
            "SELECT count(*) FROM wong_statistics WHERE individual_key IN ('p-1', 'p-5', 'p-11')"
        )
        assert (await cur.fetchone()) == (0,)
        cur = await conn.execute(
            "SELECT count(*) FROM cluster_ledgers WHERE 'p-1' = ANY(individuals)"
        )
        assert (await cur.fetchone()) == (0,)
    assert (
        await client.get("/v1/series/w/statistics?individual=p-1", headers=publisher)
    ).status_code == 403


async def test_statistics_of_a_method_without_a_file(client: httpx.AsyncClient) -> None:
    await create_series(client)
    auditor = await create_key(client, "auditor")
    response = await client.get("/v1/series/prison-health/statistics?individual=p", headers=auditor)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "no_statistics_file"

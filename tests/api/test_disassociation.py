"""A disassociation series over HTTP: create, publish, read the chunk layout (JSON, NDJSON),
check k^m-anonymity independently, bad parameters, the layout read back from PostgreSQL."""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from typing import Any

import httpx
import psycopg
import pytest

from app.db.embedded import libpq_url
from app.db.repositories.release_load import RELEASE_CACHE
from app.services.renderings import clear_render_cache
from tests.api.conftest import ADMIN, create_key, create_series, wait_job

pytestmark = [pytest.mark.anyio, pytest.mark.db]

PARAMS = {"k": 3, "m": 2, "max_cluster_size": 12, "strategy": "adding"}
# Skewed frequencies, as in click streams: a few terms in most records, a long tail.
TERMS = [f"t{i:02d}" for i in range(16)]
WEIGHTS = [1 / (i + 1) for i in range(16)]


def snapshot(seed: int, n: int = 80) -> list[list[str]]:
    rng = random.Random(seed)
    records = []
    for _ in range(n):
        size = rng.randint(1, 5)
        records.append(sorted(set(rng.choices(TERMS, WEIGHTS, k=size))))
    return records


def text(records: list[list[str]]) -> str:
    return "".join(" ".join(r) + "\n" for r in records)


def km_violations(chunk: list[list[str]], k: int, m: int) -> list[tuple[str, ...]]:
    """Combinations of up to ``m`` terms of a sub-record held by fewer than ``k`` of the
    chunk's sub-records (k^m-anonymity, thesis Definition 1, read per chunk)."""
    support: Counter[tuple[str, ...]] = Counter()
    for sub in chunk:
        for size in range(1, m + 1):
            support.update(itertools.combinations(sorted(sub), size))
    return sorted(c for c, n in support.items() if n < k)


def check_release(release: dict[str, Any], records: list[list[str]]) -> None:
    k, m = release["k"], release["m"]
    assert release["method"] == "disassociation" and (k, m) == (3, 2)
    assert release["n_records"] == len(records) == sum(c["size"] for c in release["clusters"])
    chunks = [chunk for c in release["clusters"] for chunk in c["record_chunks"]]
    chunks += [chunk for j in release["joint_clusters"] for chunk in j["shared_chunks"]]
    assert chunks, "a corpus with frequent terms publishes some record chunk"
    for chunk in chunks:
        assert km_violations(chunk, k, m) == []
    ids = {c["id"] for c in release["clusters"]}
    for cluster in release["clusters"]:
        in_chunks = {t for chunk in cluster["record_chunks"] for sub in chunk for t in sub}
        assert not in_chunks & set(cluster["term_chunk"]), "a term is in one chunk only"
        assert all(len(chunk) <= cluster["size"] for chunk in cluster["record_chunks"])
    assert all(set(j["clusters"]) <= ids for j in release["joint_clusters"])
    # Nothing is lost (adding suppresses no record): every term of the snapshot is published.
    published = {t for c in release["clusters"] for t in c["term_chunk"]}
    published |= {t for chunk in chunks for sub in chunk for t in sub}
    assert published == {t for r in records for t in r}


async def test_disassociation_series_end_to_end(client: httpx.AsyncClient) -> None:
    series = await create_series(client, "clicks", method="disassociation", params=PARAMS)
    assert series["method"] == "disassociation"
    # Every series echoes its semantic audit settings (design.md §11), off unless asked for.
    audit = series["params"].pop("semantic_audit")
    assert audit["enabled"] is False
    assert series["params"] == {**PARAMS, "vertical": "shared", "refine": True}
    publisher = await create_key(client, "publisher", "clicks")
    analyst = await create_key(client, "analyst")
    snapshots = [snapshot(seed) for seed in (1, 2, 3)]
    for no, records in enumerate(snapshots, start=1):
        response = await client.post(
            f"/v1/series/clicks/releases?label=day{no}",
            content=text(records),
            headers={**publisher, "Content-Type": "text/plain"},
        )
        assert response.status_code == 202, response.text
        job = await wait_job(client, response.json()["id"], ADMIN)
        assert job["status"] == "succeeded", job
        assert job["release_no"] == no
        report = job["report"]
        assert report["method"] == "disassociation" and 0.0 <= report["tlost"] <= 1.0
        assert report["records"] == len(records) and report["suppressed_records"] == 0

    for no, records in enumerate(snapshots, start=1):
        url = f"/v1/series/clicks/releases/{no}"
        whole = (await client.get(url, headers=analyst)).json()
        assert whole["label"] == f"day{no}" and whole["params"] == series["params"]
        check_release(whole, records)
        streamed = await client.get(f"{url}?format=ndjson", headers=analyst)
        assert streamed.headers["content-type"].startswith("application/x-ndjson")
        lines = [json.loads(line) for line in streamed.text.splitlines()]
        assert "clusters" not in lines[0]
        assert {**lines[0], "clusters": lines[1:]} == whole

    dry = await client.post(
        "/v1/series/clicks/releases?dry_run=true&wait=true",
        content=text(snapshot(9)),
        headers={**publisher, "Content-Type": "text/plain"},
    )
    assert dry.status_code == 200, dry.text
    assert dry.json()["release"]["release_no"] == 4 and dry.json()["risk"]["n_rows"] == 0
    # The release counts the records it covers (it publishes chunks, not rows).
    assert dry.json()["release"]["n_rows"] == len(snapshot(9))
    listed = (await client.get("/v1/series/clicks/releases", headers=analyst)).json()
    assert [(r["release_no"], r["method"]) for r in listed] == [
        (1, "disassociation"),
        (2, "disassociation"),
        (3, "disassociation"),
    ]
    for item, records in zip(listed, snapshots, strict=True):
        whole = (
            await client.get(f"/v1/series/clicks/releases/{item['release_no']}", headers=analyst)
        ).json()
        assert item["n_rows"] == len(records) == whole["n_records"]
        assert item["n_clusters"] == len(whole["clusters"]) > 0


async def test_layout_is_read_back_from_postgres(
    client: httpx.AsyncClient, database_url: str
) -> None:
    """A release whose renderings are gone is rendered again from the stored layout, to the
    same bytes (storage round trip, not the publication's objects)."""
    await create_series(client, "clicks", method="disassociation", params=PARAMS)
    publisher = await create_key(client, "publisher", "clicks")
    response = await client.post(
        "/v1/series/clicks/releases?wait=true",
        content=text(snapshot(4)),
        headers={**publisher, "Content-Type": "text/plain"},
    )
    assert response.status_code == 201, response.text
    before = await client.get("/v1/series/clicks/releases/1", headers=publisher)
    async with await psycopg.AsyncConnection.connect(libpq_url(database_url)) as conn:
        await conn.execute("DELETE FROM rendered_documents")
        cur = await conn.execute("SELECT count(*) FROM disassociation_parts")
        row = await cur.fetchone()
        await conn.commit()
    assert row is not None and row[0] > 1
    RELEASE_CACHE.clear()
    clear_render_cache()
    after = await client.get("/v1/series/clicks/releases/1", headers=publisher)
    assert after.status_code == 200
    assert after.content == before.content
    assert after.headers["etag"] == before.headers["etag"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"k": 1}, "k"),
        ({"k": "three"}, "k"),
        ({"m": 0}, "m"),
        ({"k": 5, "max_cluster_size": 5}, "max_cluster_size"),
        ({"strategy": "merge"}, "strategy"),
        ({"refine": "yes"}, "refine"),
        ({"r_th": 2}, "r_th"),
    ],
)
async def test_bad_params_are_422_naming_the_field(
    client: httpx.AsyncClient, params: dict[str, Any], field: str
) -> None:
    response = await client.post(
        "/v1/series",
        headers=ADMIN,
        json={"name": "bad", "method": "disassociation", "private_terms": ["x"], "params": params},
    )
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["details"]["param"] == field
    assert f"params.{field}" in error["message"]


async def test_openapi_documents_the_chunk_layout(client: httpx.AsyncClient) -> None:
    document = (await client.get("/openapi.json")).json()
    schemas = document["components"]["schemas"]
    assert "record_chunks" in schemas["DisassociatedClusterOut"]["properties"]
    read = document["paths"]["/v1/series/{name}/releases/{release_no}"]["get"]
    media = read["responses"]["200"]["content"]["application/json"]
    refs = {s["$ref"].rsplit("/", 1)[-1] for s in media["schema"]["anyOf"]}
    assert refs == {"ReleaseOut", "DisassociatedReleaseOut"}
    example = media["examples"]["disassociation"]["value"]
    assert example["clusters"][0]["record_chunks"]
    assert "disassociation" in schemas["SeriesCreate"]["properties"]["method"]["enum"]


def test_the_checker_finds_violations() -> None:
    assert km_violations([["a", "b"], ["a"]], 2, 2) == [("a", "b"), ("b",)]
    assert km_violations([["a", "b"], ["a", "b"], ["a"]], 2, 2) == []

"""Keys and roles (docs/api.md "Roles and keys"), series, operations and the OpenAPI document."""

from __future__ import annotations

import httpx
import pytest

from app.api.deps import get_runtime
from app.db.engine import Database
from app.runtime import Runtime
from tests.api.conftest import ADMIN, create_key, create_series
from tests.api.paper import body

pytestmark = [pytest.mark.anyio, pytest.mark.db]


async def test_missing_or_unknown_key_is_401(client: httpx.AsyncClient) -> None:
    for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic abc"}):
        response = await client.get("/v1/series", headers=headers)
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "unauthorized"


async def test_roles(client: httpx.AsyncClient) -> None:
    await create_series(client)
    analyst = await create_key(client, "analyst")
    publisher = await create_key(client, "publisher", "prison-health")
    auditor = await create_key(client, "auditor")
    assert (await client.post("/v1/series", json={"name": "x"}, headers=analyst)).status_code == 403
    assert (
        await client.post("/v1/keys", json={"role": "admin"}, headers=publisher)
    ).status_code == 403
    posted = await client.post("/v1/series/prison-health/releases", json=body(1), headers=analyst)
    assert posted.status_code == 403
    assert (
        await client.post("/v1/series/prison-health/releases", json=body(1), headers=auditor)
    ).status_code == 403
    assert (await client.get("/v1/series/prison-health/risk", headers=publisher)).status_code == 403
    for key in (analyst, publisher, auditor, ADMIN):
        assert (await client.get("/v1/series/prison-health", headers=key)).status_code == 200


async def test_key_shown_once_stored_hashed_and_revocable(
    client: httpx.AsyncClient, database_url: str
) -> None:
    import psycopg

    from app.db.embedded import libpq_url

    created = await client.post("/v1/keys", json={"role": "auditor"}, headers=ADMIN)
    assert created.status_code == 201
    key = created.json()
    assert key["role"] == "auditor" and key["series"] is None and key["key"]
    async with await psycopg.AsyncConnection.connect(libpq_url(database_url)) as conn:
        cur = await conn.execute("SELECT count(*) FROM api_keys WHERE key_hash = %s", (key["key"],))
        assert (await cur.fetchone()) == (0,)
    headers = {"Authorization": f"Bearer {key['key']}"}
    assert (await client.get("/v1/series", headers=headers)).status_code == 200
    assert (await client.delete(f"/v1/keys/{key['id']}", headers=ADMIN)).status_code == 204
    assert (await client.get("/v1/series", headers=headers)).status_code == 401
    assert (await client.delete(f"/v1/keys/{key['id']}", headers=ADMIN)).status_code == 404
    bad = await client.post("/v1/keys", json={"role": "admin", "series": "s"}, headers=ADMIN)
    assert bad.status_code == 422
    assert (await client.post("/v1/keys", json={"role": "root"}, headers=ADMIN)).status_code == 422


async def test_series_echo_effective_params(client: httpx.AsyncClient) -> None:
    created = await create_series(client, params={"r_th": 2})
    assert created["params"]["r_th"] == 2.0 and created["params"]["cluster_size"] == 10
    assert created["n_releases"] == 0 and created["method"] == "sanony"
    wong = await create_series(client, name="w", method="wong", params={"l": 3})
    assert wong["params"]["l"] == 3 and "r_th" not in wong["params"]
    listed = (await client.get("/v1/series", headers=ADMIN)).json()
    assert [s["name"] for s in listed] == ["prison-health", "w"]


async def test_publisher_for_all_series(client: httpx.AsyncClient) -> None:
    await create_series(client)
    anywhere = await create_key(client, "publisher")
    response = await client.post(
        "/v1/series/prison-health/releases?wait=true", json=body(1), headers=anywhere
    )
    assert response.status_code == 201


async def test_operations(client: httpx.AsyncClient) -> None:
    assert (await client.get("/healthz")).json() == {"status": "ok"}
    assert (await client.get("/readyz")).json() == {"status": "ready"}
    metrics = await client.get("/metrics")
    assert metrics.status_code == 200
    assert "serialpub_http_requests_total" in metrics.text
    assert "serialpub_publication_phase_seconds" in metrics.text


async def test_readyz_without_database(client: httpx.AsyncClient, settings: object) -> None:
    unreachable = Database("postgresql+psycopg://nobody@127.0.0.1:1/none", pool_size=1)
    runtime = Runtime(settings=settings, db=unreachable, secret=b"x")  # type: ignore[arg-type]
    client.app.dependency_overrides[get_runtime] = lambda: runtime  # type: ignore[attr-defined]
    response = await client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "not_ready"
    await unreachable.dispose()


async def test_unknown_route_answers_the_error_body(client: httpx.AsyncClient) -> None:
    response = await client.get("/v2/nothing")
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


async def test_openapi_describes_the_contract(client: httpx.AsyncClient) -> None:
    document = (await client.get("/openapi.json")).json()
    paths = document["paths"]
    for path in (
        "/v1/keys",
        "/v1/keys/{key_id}",
        "/v1/series",
        "/v1/series/{name}",
        "/v1/series/{name}/releases",
        "/v1/series/{name}/releases/{release_no}",
        "/v1/jobs/{job_id}",
        "/v1/series/{name}/releases/{release_no}/risk",
        "/v1/series/{name}/releases/{release_no}/risk/rows",
        "/v1/series/{name}/risk",
        "/v1/series/{name}/releases/{release_no}/cover",
        "/v1/series/{name}/statistics",
        "/healthz",
        "/readyz",
        "/metrics",
    ):
        assert path in paths, path
    upload = paths["/v1/series/{name}/releases"]["post"]["requestBody"]["content"]
    assert set(upload) == {"application/json", "text/plain", "text/csv"}
    assert all("example" in media for media in upload.values())
    assert "ReleaseBody" in document["components"]["schemas"]
    assert "TransactionIn" in document["components"]["schemas"]
    assert document["components"]["schemas"]["SeriesCreate"].get("examples")


async def test_openapi_says_what_population_rates_are_and_names_every_warning(
    client: httpx.AsyncClient,
) -> None:
    """population_rates were undescribed, and the disclosing_population_rate warning of
    351dae3 was named in the README only (docs/api.md: the OpenAPI document describes it all)."""
    schemas = (await client.get("/openapi.json")).json()["components"]["schemas"]
    rates = schemas["ReleaseOut"]["properties"]["population_rates"]["description"]
    assert "ss(s, T^μ)" in rates and "disclosing_population_rate" in rates
    for schema in ("JobOut", "PublishResult"):
        described = schemas[schema]["properties"]["warnings"]["description"]
        for code in (
            "publisher_seed",
            "private_term_published_earlier",
            "disclosing_population_rate",
        ):
            assert code in described, (schema, code)


async def test_a_key_for_a_series_that_does_not_exist_is_refused(
    client: httpx.AsyncClient,
) -> None:
    """It would be a key to whatever series is later created under that name."""
    for role in ("publisher", "analyst", "auditor"):
        response = await client.post(
            "/v1/keys", json={"role": role, "series": "nope"}, headers=ADMIN
        )
        assert response.status_code == 404, response.text
        assert response.json()["error"]["details"] == {"series": "nope"}
    listed = await client.get("/v1/keys", headers=ADMIN)
    assert all(k.get("series") != "nope" for k in listed.json())


async def test_a_role_that_may_not_is_403_whatever_the_query(client: httpx.AsyncClient) -> None:
    """The role and the key's series are checked before the path, query and headers are
    validated: a key that may not use an operation learns that (403), not how to phrase the
    request (422)."""
    await create_series(client)
    analyst = await create_key(client, "analyst")
    await create_series(client, name="other")
    elsewhere = await create_key(client, "analyst", "other")
    series = "/v1/series/prison-health"
    refused = [
        (analyst, "GET", f"{series}/statistics"),  # individual missing
        (analyst, "GET", f"{series}/statistics?individual="),
        (analyst, "GET", f"{series}/risk?r_th=0"),
        (analyst, "GET", f"{series}/releases/0/risk"),
        (analyst, "HEAD", f"{series}/releases/0/risk"),
        (analyst, "GET", f"{series}/releases/1/risk/rows?limit=0"),
        (analyst, "GET", f"{series}/releases/0/cover"),
        (analyst, "GET", f"{series}/releases/0/ledger"),
        (analyst, "GET", f"{series}/releases/0/attacks"),
        (analyst, "POST", f"{series}/releases?label={'x' * 201}"),
        (analyst, "DELETE", "/v1/keys/not-a-uuid"),
        (elsewhere, "GET", f"{series}/releases/0"),
        (elsewhere, "GET", f"{series}/releases/1?format=xml"),
        (elsewhere, "HEAD", f"{series}/releases/0"),
    ]
    for headers, method, url in refused:
        response = await client.request(method, url, headers=headers)
        assert response.status_code == 403, (method, url, response.status_code, response.text)
    # A key that may: the same requests are refused for what they are.
    auditor = await create_key(client, "auditor")
    for method, url in [("GET", f"{series}/statistics"), ("GET", f"{series}/releases/0/cover")]:
        assert (await client.request(method, url, headers=auditor)).status_code == 422

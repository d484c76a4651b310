"""The contract: roles before bodies, documented errors and examples,
offline docs, key listing and series-scoped keys."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.api.conftest import ADMIN, create_key, create_series
from tests.api.paper import body

pytestmark = [pytest.mark.anyio, pytest.mark.db]


async def test_role_is_checked_before_the_body(client: httpx.AsyncClient) -> None:
    analyst = await create_key(client, "analyst")
    for url in ("/v1/keys", "/v1/series"):
        for content in (b'{"role": 1}', b"{not json", b'{"name": "x", "private_terms": []}'):
            response = await client.post(
                url, content=content, headers={**analyst, "Content-Type": "application/json"}
            )
            assert response.status_code == 403, (url, content, response.text)
        missing = await client.post(
            url, content=b"{not json", headers={"Content-Type": "application/json"}
        )
        assert missing.status_code == 401


async def test_undecodable_json_is_400(client: httpx.AsyncClient) -> None:
    for url in ("/v1/keys", "/v1/series"):
        response = await client.post(
            url, content=b'{"role": ', headers={**ADMIN, "Content-Type": "application/json"}
        )
        assert response.status_code == 400, response.text
        assert response.json()["error"]["code"] == "invalid_json"
        response = await client.post(
            url, content=b'{"role": "\xff"}', headers={**ADMIN, "Content-Type": "application/json"}
        )
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "invalid_encoding"


async def test_a_series_needs_a_private_term(client: httpx.AsyncClient) -> None:
    for private in ([], None):
        payload: dict[str, Any] = {"name": "s"}
        if private is not None:
            payload["private_terms"] = private
        response = await client.post("/v1/series", json=payload, headers=ADMIN)
        assert response.status_code == 422, response.text
        assert response.json()["error"]["details"]["loc"] == ["private_terms"]


async def test_openapi_documents_errors_and_examples(client: httpx.AsyncClient) -> None:
    document = (await client.get("/openapi.json")).json()
    schemas = document["components"]["schemas"]
    assert "HTTPValidationError" not in schemas and "ValidationError" not in schemas
    for name, schema in schemas.items():
        assert schema.get("examples"), f"schema {name} has no example"
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            where = f"{method.upper()} {path}"
            for parameter in operation.get("parameters", []):
                assert "example" in parameter, (where, parameter["name"])
            responses = operation["responses"]
            for code, response in responses.items():
                for media, content in response.get("content", {}).items():
                    assert "example" in content or "examples" in content, (where, code, media)
                if not code.startswith("2"):
                    ref = response["content"]["application/json"]["schema"]["$ref"]
                    assert ref.endswith("/ErrorBody"), (where, code)
            if "requestBody" in operation:
                assert {"400", "413", "415", "422"} <= set(responses), where
                for media, content in operation["requestBody"]["content"].items():
                    assert "example" in content, (where, media)
    keys = document["paths"]["/v1/keys"]["post"]["requestBody"]["content"]["application/json"]
    assert keys["schema"]["$ref"].endswith("/KeyCreate")


async def test_docs_are_served_without_a_cdn(client: httpx.AsyncClient) -> None:
    for page in ("/docs", "/redoc"):
        html = (await client.get(page)).text
        assert "cdn." not in html and "/static-offline-docs/" in html, page
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js"):
        response = await client.get(f"/static-offline-docs/{asset}")
        assert response.status_code == 200 and len(response.content) > 10_000, asset


async def test_admin_lists_keys_without_their_values(client: httpx.AsyncClient) -> None:
    await create_series(client, name="s")
    created = await client.post("/v1/keys", json={"role": "auditor", "series": "s"}, headers=ADMIN)
    assert created.status_code == 201
    listed = await client.get("/v1/keys", headers=ADMIN)
    assert listed.status_code == 200
    entries = {k["id"]: k for k in listed.json()}
    entry = entries[created.json()["id"]]
    assert entry["role"] == "auditor" and entry["series"] == "s" and "key" not in entry
    assert any(k["role"] == "admin" for k in entries.values())
    auditor = {"Authorization": f"Bearer {created.json()['key']}"}
    assert (await client.get("/v1/keys", headers=auditor)).status_code == 403
    await client.delete(f"/v1/keys/{entry['id']}", headers=ADMIN)
    again = (await client.get("/v1/keys", headers=ADMIN)).json()
    assert entry["id"] not in {k["id"] for k in again}


async def test_analyst_and_auditor_keys_scoped_to_a_series(client: httpx.AsyncClient) -> None:
    await create_series(client, name="a")
    await create_series(client, name="b")
    for name in ("a", "b"):
        posted = await client.post(
            f"/v1/series/{name}/releases?wait=true", json=body(1), headers=ADMIN
        )
        assert posted.status_code == 201, posted.text
    analyst = await create_key(client, "analyst", "a")
    auditor = await create_key(client, "auditor", "a")
    for key in (analyst, auditor):
        assert (await client.get("/v1/series/a/releases/1", headers=key)).status_code == 200
        assert (await client.get("/v1/series/b/releases/1", headers=key)).status_code == 403
        assert (await client.get("/v1/series/b", headers=key)).status_code == 403
        listed = (await client.get("/v1/series", headers=key)).json()
        assert [s["name"] for s in listed] == ["a"]
    assert (await client.get("/v1/series/a/risk", headers=auditor)).status_code == 200
    assert (await client.get("/v1/series/b/risk", headers=auditor)).status_code == 403
    unscoped = await create_key(client, "analyst")
    assert (await client.get("/v1/series/b/releases/1", headers=unscoped)).status_code == 200


async def test_release_numbers_beyond_the_database_answer_422(client: httpx.AsyncClient) -> None:
    """Schemathesis found it: 2**31 reached PostgreSQL's int4 and answered 500."""
    await create_series(client)
    for path in ("", "/risk", "/risk/rows", "/cover"):
        response = await client.get(
            f"/v1/series/prison-health/releases/2147483648{path}", headers=ADMIN
        )
        assert response.status_code == 422, (path, response.text)
        assert response.json()["error"]["code"] == "invalid_request"

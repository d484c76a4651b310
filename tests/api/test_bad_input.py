"""Every bad input of docs/api.md: its status, an error body naming the fault, nothing stored."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import psycopg
import pytest

from app.db.embedded import libpq_url
from tests.api.conftest import ADMIN, create_key, create_series

pytestmark = [pytest.mark.anyio, pytest.mark.db]

URL = "/v1/series/prison-health/releases"
JSON = "application/json"
PLAIN = "text/plain"
CSV = "text/csv"


def _tx(*terms: str, **extra: Any) -> dict[str, Any]:
    return {"terms": list(terms), **extra}


CASES: list[tuple[str, str, bytes | dict[str, Any], int, str, dict[str, Any]]] = [
    ("empty corpus (json)", JSON, {"transactions": []}, 422, "invalid_corpus", {}),
    ("empty corpus (text)", PLAIN, b"", 422, "invalid_corpus", {}),
    ("empty corpus (csv)", CSV, b"terms\n", 422, "invalid_corpus", {}),
    (
        "transaction with no terms (json)",
        JSON,
        {"transactions": [_tx("a", "b"), _tx()]},
        422,
        "invalid_corpus",
        {"item": 1},
    ),
    (
        "transaction with no terms (text)",
        PLAIN,
        b"a b\n\nc d\n",
        422,
        "invalid_corpus",
        {"line": 2},
    ),
    (
        "transaction with no terms (csv)",
        CSV,
        b'terms\na;b\n""\n',
        422,
        "invalid_corpus",
        {"line": 3},
    ),
    (
        "empty term (json)",
        JSON,
        {"transactions": [_tx("a"), _tx("b", "")]},
        422,
        "invalid_corpus",
        {"item": 1},
    ),
    ("empty term (csv)", CSV, b"terms\na;;b\n", 422, "invalid_corpus", {"line": 2}),
    (
        "term over 200 characters (text)",
        PLAIN,
        b"a b\nc d\ne " + b"x" * 201 + b"\n",
        422,
        "invalid_corpus",
        {"line": 3},
    ),
    (
        "term over 200 characters (json)",
        JSON,
        {"transactions": [_tx("y" * 201)]},
        422,
        "invalid_corpus",
        {"item": 0},
    ),
    (
        "bytes that are not UTF-8 (text)",
        PLAIN,
        b"a b\nc \xff d\n",
        400,
        "invalid_encoding",
        {"line": 2},
    ),
    (
        "bytes that are not UTF-8 (csv)",
        CSV,
        b"terms\na;b\n\xc3\x28\n",
        400,
        "invalid_encoding",
        {"line": 3},
    ),
    (
        "bytes that are not UTF-8 (json)",
        JSON,
        b'{"transactions": [{"terms": ["\xff"]}]}',
        400,
        "invalid_encoding",
        {"line": 1},
    ),
    (
        "cluster on some transactions only (json)",
        JSON,
        {"transactions": [_tx("a", cluster="g1"), _tx("b")]},
        422,
        "invalid_corpus",
        {"item": 1},
    ),
    (
        "cluster on some transactions only (csv)",
        CSV,
        b"terms,cluster\na,g1\nb,\n",
        422,
        "invalid_corpus",
        {"line": 3},
    ),
    ("invalid JSON", JSON, b'{"transactions": [', 400, "invalid_json", {"line": 1}),
    (
        "JSON of the wrong shape",
        JSON,
        {"transactions": [{"terms": "a b"}]},
        422,
        "invalid_body",
        {"item": 0},
    ),
    ("CSV without a terms column", CSV, b"items\na;b\n", 400, "invalid_csv", {"line": 1}),
    ("wrong content type", "application/xml", b"<a/>", 415, "unsupported_media_type", {}),
    ("body over the limit", PLAIN, b"a b c\n" * 40_000, 413, "payload_too_large", {}),
]


async def _stored(url: str) -> tuple[int, int, int]:
    async with await psycopg.AsyncConnection.connect(libpq_url(url)) as conn:
        counts = []
        for table in ("releases", "jobs", "job_inputs"):
            cur = await conn.execute(f"SELECT count(*) FROM {table}")  # type: ignore[arg-type]
            row = await cur.fetchone()
            counts.append(int(row[0]) if row else -1)
    return counts[0], counts[1], counts[2]


@pytest.mark.parametrize(
    ("content_type", "payload", "status", "code", "details"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
async def test_bad_input_is_refused_and_nothing_stored(
    client: httpx.AsyncClient,
    database_url: str,
    content_type: str,
    payload: bytes | dict[str, Any],
    status: int,
    code: str,
    details: dict[str, Any],
) -> None:
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    content = (
        payload if isinstance(payload, bytes) else httpx.Request("POST", "/", json=payload).content
    )
    response = await client.post(
        URL, content=content, headers={**publisher, "Content-Type": content_type}
    )
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code and error["message"]
    assert details.items() <= error["details"].items()
    for name, value in details.items():
        assert f"{name} {value}" in error["message"] or name == "item" and code == "invalid_body"
    assert await _stored(database_url) == (0, 0, 0)


async def test_individual_missing_for_wong(client: httpx.AsyncClient, database_url: str) -> None:
    await create_series(client, name="w", method="wong", params={"l": 2, "cluster_size": 2})
    publisher = await create_key(client, "publisher", "w")
    payload = {"transactions": [_tx("a", "HIV", individual="p1"), _tx("b", "cancer")]}
    response = await client.post("/v1/series/w/releases", json=payload, headers=publisher)
    assert response.status_code == 422
    assert response.json()["error"]["details"] == {"item": 1, "field": "individual"}
    lines = b"terms,individual\na;HIV,p1\nb;cancer,\n"
    response = await client.post(
        "/v1/series/w/releases", content=lines, headers={**publisher, "Content-Type": CSV}
    )
    assert response.status_code == 422
    assert response.json()["error"]["details"]["line"] == 3
    assert await _stored(database_url) == (0, 0, 0)


async def _chunks(n: int) -> AsyncIterator[bytes]:
    for _ in range(n):
        yield b"theft arson fraud\n" * 1000


async def test_streamed_body_over_the_limit_without_length(
    client: httpx.AsyncClient, database_url: str
) -> None:
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    response = await client.post(
        URL, content=_chunks(50), headers={**publisher, "Content-Type": PLAIN}
    )
    assert response.status_code == 413
    assert response.json()["error"]["details"] == {"limit": 200_000}
    assert await _stored(database_url) == (0, 0, 0)


async def test_extra_private_term_too_long(client: httpx.AsyncClient, database_url: str) -> None:
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    response = await client.post(
        f"{URL}?private_terms={'z' * 201}",
        content=b"a b\n",
        headers={**publisher, "Content-Type": PLAIN},
    )
    assert response.status_code == 422
    assert response.json()["error"]["details"]["field"] == "private_terms"
    assert await _stored(database_url) == (0, 0, 0)


async def test_bad_series_parameters(client: httpx.AsyncClient) -> None:
    from tests.api.conftest import ADMIN

    bad = [
        {"name": "s", "method": "nope"},
        {"name": "s", "params": {"r_th": 0.5}},
        {"name": "s", "params": {"typo": 1}},
        {"name": "s", "private_terms": [""]},
        {"name": "bad name!"},
        {"name": "s", "unknown": 1},
    ]
    for body in bad:
        response = await client.post("/v1/series", json=body, headers=ADMIN)
        assert response.status_code == 422, (body, response.text)
        assert response.json()["error"]["message"]
    await create_series(client, name="s")
    again = await client.post(
        "/v1/series", json={"name": "s", "private_terms": ["HIV"]}, headers=ADMIN
    )
    assert again.status_code == 409 and again.json()["error"]["code"] == "name_taken"


async def test_a_series_takes_at_most_10000_private_terms(client: httpx.AsyncClient) -> None:
    """The limit docs/api.md states ("POST /v1/series"), and the error past it."""
    from tests.api.conftest import ADMIN

    terms = [f"t{k}" for k in range(10_001)]
    over = await client.post(
        "/v1/series", json={"name": "s", "private_terms": terms}, headers=ADMIN
    )
    assert over.status_code == 422, over.text
    error = over.json()["error"]
    assert error["code"] == "invalid_body" and error["details"]["loc"] == ["private_terms"]
    assert "at most 10000" in error["message"]
    assert (await client.get("/v1/series", headers=ADMIN)).json() == []
    at = await client.post(
        "/v1/series", json={"name": "s", "private_terms": terms[:10_000]}, headers=ADMIN
    )
    assert at.status_code == 201, at.text
    assert len(at.json()["private_terms"]) == 10_000


@pytest.mark.parametrize("shape", ["array", "object"])
@pytest.mark.parametrize("depth", [100, 990, 20_000, 100_000])
async def test_deeply_nested_json_is_a_4xx(
    client: httpx.AsyncClient, database_url: str, depth: int, shape: str
) -> None:
    """A deeply nested body (``[[[...]]]`` or ``{"a":{"a":...}}``) answered 500 on every JSON
    route: RecursionError in the JSON decoder, from under 990 levels within the app's stack
    (1,000 in a bare interpreter). 100 levels is the control (parsed, then refused as the wrong
    shape); 100,000 may exceed a release's byte limit first (413)."""
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    keys_before = len((await client.get("/v1/keys", headers=ADMIN)).json())
    if shape == "array":
        nested = "[" * depth + "]" * depth
    else:
        nested = '{"a":' * depth + "1" + "}" * depth
    releases = "/v1/series/prison-health/releases"
    for method, url, body, headers in (
        ("POST", "/v1/series", nested, ADMIN),
        ("POST", "/v1/series", f'{{"name": "x", "private_terms": ["a"], "params": {nested}}}',
         ADMIN),
        ("POST", releases, nested, publisher),
        ("POST", f"{releases}?wait=true", nested, publisher),
        ("POST", f"{releases}?dry_run=true",
         f'{{"transactions": [{{"terms": ["a"], "individual": {nested}}}]}}', publisher),
        ("POST", releases, f'{{"label": {nested}, "transactions": [{{"terms": ["a"]}}]}}',
         publisher),
        ("PUT", "/v1/series/prison-health/background", nested, publisher),
        ("POST", "/v1/keys", nested, ADMIN),
        ("POST", "/v1/keys", f'{{"role": "analyst", "series": {nested}}}', ADMIN),
    ):  # fmt: skip
        response = await client.request(
            method, url, content=body.encode(),
            headers={**headers, "Content-Type": "application/json"},
        )  # fmt: skip
        assert 400 <= response.status_code < 500, (url, response.status_code, response.text)
        error = response.json()["error"]
        assert error["message"]
        if depth == 20_000 or (depth > 20_000 and response.status_code != 413):
            assert (response.status_code, error["code"]) == (400, "invalid_json"), (url, error)
            assert "nested too deeply" in error["message"]
    assert await _stored(database_url) == (0, 0, 0)
    assert [s["name"] for s in (await client.get("/v1/series", headers=ADMIN)).json()] == [
        "prison-health"
    ]
    assert len((await client.get("/v1/keys", headers=ADMIN)).json()) == keys_before

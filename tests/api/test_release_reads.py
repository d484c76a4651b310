"""A release's GET answered from this process' memory before the router
(app.api.release_reads): the route's answer, byte for byte; the route's checks; recorded
and counted as the route's."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from prometheus_client import REGISTRY

from app.api import release_reads
from app.services.access_trail import TRAIL
from app.services.auth import configure_reader_cache
from app.services.withdrawal import configure_withdrawn_cache
from app.settings import Settings
from tests.api.conftest import ADMIN, create_key, create_series
from tests.api.paper import body

pytestmark = [pytest.mark.anyio, pytest.mark.db]

URL = "/v1/series/prison-health/releases/1"
ROUTE = "/v1/series/{name}/releases/{release_no}"


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch, settings: Settings) -> Iterator[list[bool]]:
    """Whether each request was answered from memory (``False``: it went on to the route).
    The caches trust what they read for a minute here, so that a loaded machine's pause
    does not send a request to the route."""
    answers: list[bool] = []
    answer = release_reads.HeldReleaseReads._answer

    def spied(self: release_reads.HeldReleaseReads, scope: Any) -> Any:
        response = answer(self, scope)
        answers.append(response is not None)
        return response

    monkeypatch.setattr(release_reads.HeldReleaseReads, "_answer", spied)
    configure_reader_cache(60.0)
    configure_withdrawn_cache(60.0)
    try:
        yield answers
    finally:
        configure_reader_cache(settings.read_auth_cache_s)
        configure_withdrawn_cache(settings.read_auth_cache_s)


async def _published(client: httpx.AsyncClient) -> None:
    await create_series(client)
    for release in (1, 2):
        posted = await client.post(
            "/v1/series/prison-health/releases?wait=true", json=body(release), headers=ADMIN
        )
        assert posted.status_code == 201, posted.text


async def _answer(
    client: httpx.AsyncClient, method: str, url: str, headers: dict[str, str]
) -> tuple[int, list[tuple[str, str]], bytes]:
    """Status, headers but the date, and the body as sent (httpx would inflate gzip)."""
    async with client.stream(method, url, headers=headers) as response:
        raw = b"".join([part async for part in response.aiter_raw()])
    kept = [(k, v) for k, v in response.headers.multi_items() if k != "date"]
    return response.status_code, kept, raw


async def test_the_held_answer_is_the_routes(
    client: httpx.AsyncClient, held: list[bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    await _published(client)
    analyst = await create_key(client, "analyst")
    auditor = await create_key(client, "auditor", "prison-health")
    etag = (await client.get(URL, headers=analyst)).headers["etag"]
    cases: list[tuple[str, str, dict[str, str]]] = [
        ("GET", "", {"Accept-Encoding": "identity"}),
        ("GET", "", {"Accept-Encoding": "gzip"}),
        ("GET", "?format=ndjson", {"Accept-Encoding": "gzip, deflate"}),
        ("GET", "?format=json", {"Accept-Encoding": "identity", "Range": "bytes=10-99"}),
        ("GET", "", {"Accept-Encoding": "gzip", "Range": "bytes=-5"}),
        ("GET", "", {"Accept-Encoding": "identity", "Range": "bytes=999999-"}),  # 416
        ("GET", "", {"If-None-Match": etag}),
        ("GET", "", {"If-None-Match": f'W/{etag[:-1]}-gzip"', "Accept-Encoding": "gzip"}),
        ("HEAD", "", {"Accept-Encoding": "gzip"}),
        ("HEAD", "?format=ndjson", {}),
    ]
    for key in (analyst, auditor, ADMIN):
        for method, query, headers in cases:
            request = (method, URL + query, {**key, **headers})
            with monkeypatch.context() as nothing_held:
                nothing_held.setattr(release_reads, "held_release_document", lambda *a: None)
                by_route = await _answer(client, *request)
                assert not held[-1], request
            from_memory = await _answer(client, *request)
            assert held[-1], f"the route answered {request}"
            assert from_memory == by_route, request


async def test_what_memory_cannot_tell_goes_to_the_route(
    client: httpx.AsyncClient, held: list[bool]
) -> None:
    await _published(client)
    analyst = await create_key(client, "analyst")
    auditor = await create_key(client, "auditor")
    publisher = await create_key(client, "publisher", "prison-health")

    async def read(key: dict[str, str], from_memory: bool) -> tuple[int, dict[str, Any]]:
        response = await client.get(URL, headers=key)
        assert held[-1] is from_memory, response.text
        return response.status_code, response.json() if response.status_code != 200 else {}

    # The first read of each key goes to the route, which fills the memory; then from memory.
    for key in (analyst, auditor, publisher, ADMIN):
        assert (await read(key, from_memory=False))[0] == 200
        assert (await read(key, from_memory=True))[0] == 200
    # Query strings and paths the route alone answers, the same on every try.
    for url in (f"{URL}?format=xml", f"{URL}?format=json&x=1", f"{URL}/", URL[:-1] + "01"):
        first = await client.get(url, headers=analyst)
        again = await client.get(url, headers=analyst)
        assert not held[-1] and not held[-2], url
        assert (first.status_code, first.content) == (again.status_code, again.content), url
    # A remembered key that may not read this series: 403 from the route, every time.
    await create_series(client, "other")
    other = await create_key(client, "analyst", "other")
    for _ in range(2):
        status, error = await read(other, from_memory=False)
        assert status == 403 and error["error"]["code"] == "forbidden"
    # Withdrawn: 410 for analysts and publishers at once in this process, auditors still read.
    withdrawn = await client.post(f"{URL}/withdraw", json={"reason": "wrong year"}, headers=ADMIN)
    assert withdrawn.status_code == 200, withdrawn.text
    for key in (analyst, publisher):
        for _ in range(2):
            status, error = await read(key, from_memory=False)
            assert status == 410 and error["error"]["code"] == "release_withdrawn"
        assert (await client.head(URL, headers=key)).status_code == 410
    assert (await read(auditor, from_memory=True))[0] == 200
    # Revoked: 401 from the route at once in this process.
    keys = (await client.get("/v1/keys", headers=ADMIN)).json()
    auditor_id = next(k["id"] for k in keys if k["role"] == "auditor")
    assert (await client.delete(f"/v1/keys/{auditor_id}", headers=ADMIN)).status_code == 204
    status, error = await read(auditor, from_memory=False)
    assert status == 401 and error["error"]["code"] == "unauthorized"
    # No key, another scheme: 401 from the route.
    for headers in ({}, {"Authorization": "Basic " + analyst["Authorization"][7:]}):
        assert (await client.get(URL, headers=headers)).status_code == 401
        assert not held[-1]


def _requests(status: str) -> float:
    labels = {"method": "GET", "route": ROUTE, "status": status}
    return REGISTRY.get_sample_value("serialpub_http_requests_total", labels) or 0.0


async def test_held_reads_are_recorded_and_counted_as_the_routes(
    client: httpx.AsyncClient, held: list[bool]
) -> None:
    await _published(client)
    created = await client.post(
        "/v1/keys", json={"role": "analyst", "series": "prison-health"}, headers=ADMIN
    )
    key_id, analyst = created.json()["id"], {"Authorization": f"Bearer {created.json()['key']}"}
    await TRAIL.flush(client.app.state.runtime.db)  # type: ignore[attr-defined]
    counted = _requests("200")
    for _ in range(4):
        assert (await client.get(URL, headers=analyst)).status_code == 200
    assert (await client.head(URL, headers=analyst)).status_code == 200
    assert held[-5:] == [False, True, True, True, True]  # the first read went to the route
    assert _requests("200") == counted + 4
    await TRAIL.flush(client.app.state.runtime.db)  # type: ignore[attr-defined]
    events = await client.get("/v1/access-trail", params={"key_id": key_id}, headers=ADMIN)
    got = {(e["action"], e["role"], e["release_no"], e["status"]) for e in events.json()["events"]}
    assert got == {("release.read", "analyst", 1, 200)}
    assert sum(e["requests"] for e in events.json()["events"]) == 5

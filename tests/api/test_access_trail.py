"""The access trail (docs/api.md "GET /v1/access-trail"; docs/deploy.md "The access trail")."""

from __future__ import annotations

import asyncio
import datetime as dt
import uuid
from typing import Any

import httpx
import psycopg
import pytest

from app.db.embedded import libpq_url
from app.db.engine import Database
from app.services import access_trail
from app.services.access_trail import TRAIL, AccessAction, Event
from tests.api.conftest import ADMIN, create_series, wait_job
from tests.api.paper import body

pytestmark = [pytest.mark.anyio, pytest.mark.db]

TRAIL_URL = "/v1/access-trail"


async def _key(client: httpx.AsyncClient, role: str, series: str | None = None) -> tuple[str, str]:
    """(id, plain value) of a new key."""
    created = await client.post("/v1/keys", json={"role": role, "series": series}, headers=ADMIN)
    assert created.status_code == 201, created.text
    return created.json()["id"], created.json()["key"]


def _bearer(plain: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {plain}"}


async def _events(client: httpx.AsyncClient, **query: Any) -> list[dict[str, Any]]:
    response = await client.get(TRAIL_URL, params=query, headers=ADMIN)
    assert response.status_code == 200, response.text
    return list(response.json()["events"])


async def _published(client: httpx.AsyncClient) -> tuple[str, str]:
    """A series with one release; the publisher's (id, plain key)."""
    await create_series(client)
    publisher_id, publisher = await _key(client, "publisher", "prison-health")
    posted = await client.post(
        "/v1/series/prison-health/releases?wait=true", json=body(1), headers=_bearer(publisher)
    )
    assert posted.status_code == 201, posted.text
    return publisher_id, publisher


async def test_reads_publications_and_key_operations_are_recorded_without_the_key(
    client: httpx.AsyncClient, database_url: str
) -> None:
    publisher_id, publisher = await _published(client)
    auditor_id, auditor = await _key(client, "auditor", "prison-health")
    analyst_id, analyst = await _key(client, "analyst")
    reads = {
        "/v1/series/prison-health/releases/1": (analyst, "release.read"),
        "/v1/series/prison-health/releases/1/risk": (auditor, "risk.read"),
        "/v1/series/prison-health/releases/1/cover": (auditor, "cover.read"),
        "/v1/series/prison-health/releases/1/ledger": (auditor, "ledger.read"),
    }
    for path, (key, _) in reads.items():
        assert (await client.get(path, headers=_bearer(key))).status_code == 200, path
    # A refused attempt is recorded with its status.
    refused = await client.get(
        "/v1/series/prison-health/releases/1/ledger", headers=_bearer(analyst)
    )
    assert refused.status_code == 403
    revoked = await client.delete(f"/v1/keys/{analyst_id}", headers=ADMIN)
    assert revoked.status_code == 204

    events = await _events(client, series="prison-health")
    seen = {(e["action"], e["key_id"], e["role"], e["release_no"], e["status"]) for e in events}
    assert ("release.publish", publisher_id, "publisher", None, 201) in seen
    assert ("release.read", analyst_id, "analyst", 1, 200) in seen
    assert ("risk.read", auditor_id, "auditor", 1, 200) in seen
    assert ("cover.read", auditor_id, "auditor", 1, 200) in seen
    assert ("ledger.read", auditor_id, "auditor", 1, 200) in seen
    assert ("ledger.read", analyst_id, "analyst", 1, 403) in seen
    # Creating a scoped key is recorded under its series, with the new key's id.
    created = [e for e in events if e["action"] == "key.create"]
    assert {e["details"]["key"] for e in created} == {publisher_id, auditor_id}
    everything = await _events(client)
    assert any(
        e["action"] == "key.revoke" and e["details"] == {"key": analyst_id} for e in everything
    )
    for event in everything:
        dt.datetime.fromisoformat(event["at"])
    # No key's value is stored in the trail, only ids.
    async with await psycopg.AsyncConnection.connect(libpq_url(database_url)) as conn:
        cur = await conn.execute("SELECT string_agg(e::text, ' ') FROM access_events e")
        row = await cur.fetchone()
    assert row is not None and row[0]
    for plain in (publisher, auditor, analyst, "test-admin-token"):
        assert plain not in row[0]


async def test_query_by_key_action_and_time_range_and_pages(client: httpx.AsyncClient) -> None:
    await _published(client)
    auditor_id, auditor = await _key(client, "auditor")
    db = client.app.state.runtime.db  # type: ignore[attr-defined]
    for _ in range(5):
        response = await client.get(
            "/v1/series/prison-health/releases/1/ledger", headers=_bearer(auditor)
        )
        assert response.status_code == 200
        await TRAIL.flush(db)  # five writes: five events
    mine = await _events(client, key_id=auditor_id)
    assert [e["action"] for e in mine] == ["ledger.read"] * 5
    assert await _events(client, key_id=str(uuid.uuid4())) == []
    first, last = (
        dt.datetime.fromisoformat(mine[0]["at"]),
        dt.datetime.fromisoformat(mine[-1]["at"]),
    )
    ranged = await _events(
        client,
        key_id=auditor_id,
        since=first.isoformat(),
        until=(last + dt.timedelta(microseconds=1)).isoformat(),
    )
    assert [e["id"] for e in ranged] == [e["id"] for e in mine]
    assert (
        await _events(client, key_id=auditor_id, since=(last + dt.timedelta(seconds=1)).isoformat())
        == []
    )
    assert len(await _events(client, action="ledger.read")) == 5
    # Pages of two, in order, until "next" is null.
    pages: list[int] = []
    after = None
    for _ in range(10):
        query: dict[str, Any] = {"key_id": auditor_id, "limit": 2}
        if after:
            query["after"] = after
        response = await client.get(TRAIL_URL, params=query, headers=ADMIN)
        page = response.json()
        pages += [e["id"] for e in page["events"]]
        after = page["next"]
        if after is None:
            break
    assert pages == [e["id"] for e in mine]


@pytest.mark.parametrize(
    ("query", "where"),
    [
        ({"since": "2026-12-02T00:00:00Z", "until": "2026-12-01T00:00:00Z"}, "until"),
        ({"action": "ledger.write"}, "action"),
        ({"key_id": "not-a-uuid"}, "key_id"),
        ({"after": "yesterday"}, "after"),
        ({"limit": 0}, "limit"),
    ],
)
async def test_bad_queries_answer_422_naming_the_parameter(
    client: httpx.AsyncClient, query: dict[str, Any], where: str
) -> None:
    response = await client.get(TRAIL_URL, params=query, headers=ADMIN)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_request"
    assert where in error["details"]["loc"]


async def test_only_admins_read_the_trail(client: httpx.AsyncClient) -> None:
    auditor_id, auditor = await _key(client, "auditor")
    response = await client.get(TRAIL_URL, headers=_bearer(auditor))
    assert response.status_code == 403
    events = await _events(client, key_id=auditor_id)
    assert [(e["action"], e["status"]) for e in events] == [("trail.read", 403)]


async def test_reads_are_written_off_the_request_path(
    client: httpx.AsyncClient, database_url: str
) -> None:
    """A read leaves its event in the process' buffer; the writer (or the next trail query)
    writes it, never the request itself."""
    await _published(client)
    _, analyst = await _key(client, "analyst")
    db = client.app.state.runtime.db  # type: ignore[attr-defined]
    await TRAIL.flush(db)
    before = TRAIL.pending()
    response = await client.get("/v1/series/prison-health/releases/1", headers=_bearer(analyst))
    assert response.status_code == 200
    assert TRAIL.pending() == before + 1
    assert await TRAIL.flush(db) == before + 1
    assert TRAIL.pending() == 0


async def test_events_outlive_a_failed_write(settings: Any) -> None:
    """The database refusing a write keeps the events for the next one."""
    from app.services.access_trail import AccessTrail

    trail = AccessTrail()
    trail.record(Event(0.0, None, "cli", AccessAction.KEY_LIST, None, None, 200))
    broken = Database("postgresql+psycopg://nobody@127.0.0.1:1/none", pool_size=1)
    with pytest.raises(Exception):  # noqa: B017  (whatever the driver raises)
        await broken_flush(trail, broken)
    assert trail.pending() == 1


async def broken_flush(trail: Any, db: Database) -> None:
    import asyncio

    try:
        await asyncio.wait_for(trail.flush(db), 10)
    finally:
        await db.dispose()


async def test_retention_deletes_older_events_only(
    client: httpx.AsyncClient, settings: Any
) -> None:
    db = Database(settings.database_url, pool_size=1)
    now = dt.datetime.now(dt.UTC)
    try:
        async with db.session() as session:
            for days in (400, 40, 1):
                at = (now - dt.timedelta(days=days)).timestamp()
                await access_trail.record_now(
                    session,
                    Event(at, None, "cli", AccessAction.KEY_CREATE, "s", None, 201, {"d": days}),
                )
        assert await access_trail.prune_expired(db, 0) == 0
        assert await access_trail.prune_expired(db, 30) == 2
    finally:
        await db.dispose()
    left = await _events(client, series="s")
    assert [e["details"] for e in left] == [{"d": 1}]


def test_every_operation_with_a_key_is_recorded_but_the_series_listings() -> None:
    """The route table names operations the app has, and leaves out only the series' own
    listings (no release, ledger or key is read there)."""
    from app.api.access import ROUTE_ACTIONS
    from tests.support.openapi import operations

    answered = {(method, path) for method, path in operations() if path.startswith("/v1/")}
    assert set(ROUTE_ACTIONS) <= answered, set(ROUTE_ACTIONS) - answered
    assert answered - set(ROUTE_ACTIONS) == {("GET", "/v1/series"), ("GET", "/v1/series/{name}")}


async def test_identical_reads_between_two_writes_are_one_event_with_their_count(
    client: httpx.AsyncClient,
) -> None:
    await _published(client)
    analyst_id, analyst = await _key(client, "analyst", "prison-health")
    db = client.app.state.runtime.db  # type: ignore[attr-defined]
    await TRAIL.flush(db)
    for path in ["/releases/1"] * 3 + ["/releases/1/ledger"] * 2 + ["/releases/7"]:
        await client.get(f"/v1/series/prison-health{path}", headers=_bearer(analyst))
    events = await _events(client, key_id=analyst_id)
    got = sorted((e["action"], e["release_no"], e["status"], e["requests"]) for e in events)
    assert got == [
        ("ledger.read", 1, 403, 2),
        ("release.read", 1, 200, 3),
        ("release.read", 7, 404, 1),
    ]


async def test_publish_events_name_their_release_and_the_key_that_posted_it(
    client: httpx.AsyncClient,
) -> None:
    """The post's event names its job (its answer, a 202, knew no release); the job's store
    names the release, in the release's transaction, with the key that posted it."""
    publisher_id, publisher = await _published(client)
    posted = await client.post(
        "/v1/series/prison-health/releases", json=body(2), headers=_bearer(publisher)
    )
    assert posted.status_code == 202, posted.text
    job = posted.json()["id"]
    assert (await wait_job(client, job, _bearer(publisher)))["status"] == "succeeded"
    events = await _events(client, series="prison-health", action="release.publish")
    seen = [(e["key_id"], e["role"], e["release_no"], e["status"], e["details"]) for e in events]
    first_job = next(e["details"]["job"] for e in events if e["release_no"] == 1)
    assert seen == [
        # Release 1, posted with wait=true: the post (201, stamped when it arrived), its store.
        (publisher_id, "publisher", None, 201, {"job": first_job}),
        (publisher_id, "publisher", 1, 201, {"job": first_job}),
        # Release 2: queued (202), then stored.
        (publisher_id, "publisher", None, 202, {"job": job}),
        (publisher_id, "publisher", 2, 201, {"job": job}),
    ]
    # Exactly one event names each release: which key published release N.
    for no in (1, 2):
        assert [e["key_id"] for e in events if e["release_no"] == no] == [publisher_id]


async def test_a_flush_returns_once_the_writes_under_way_have_ended(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer may hold a request's event in a COPY not yet committed when the trail is
    queried; the query's own flush waits for it, so the answer holds the request."""
    from app.services.access_trail import AccessTrail

    db = client.app.state.runtime.db  # type: ignore[attr-defined]
    trail = AccessTrail()
    trail.record(Event(0.0, None, "cli", AccessAction.KEY_LIST, None, None, 200))
    gate = asyncio.Event()
    copy = access_trail.repository.copy_events

    async def held(conn: Any, rows: Any) -> None:
        await gate.wait()
        await copy(conn, rows)

    monkeypatch.setattr(access_trail.repository, "copy_events", held)
    writer = asyncio.create_task(trail.flush(db))
    while trail.pending():  # the writer has taken the buffer
        await asyncio.sleep(0)
    query = asyncio.create_task(trail.flush(db))
    for _ in range(20):
        await asyncio.sleep(0)
    assert not query.done()  # waiting for the writer, which waits for the gate
    gate.set()
    assert await query == 0 and await writer == 1

"""Keys that expire, rotation with a grace period, last use (docs/api.md "Roles and keys")."""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

import httpx
import pytest

from app.db.engine import Database
from app.services.access_trail import TRAIL
from app.services.auth import ensure_admin_token, hash_key
from tests.api.conftest import ADMIN, create_series
from tests.api.paper import body

pytestmark = [pytest.mark.anyio, pytest.mark.db]


def _bearer(plain: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {plain}"}


def _in(seconds: float) -> str:
    return (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=seconds)).isoformat()


async def _create(client: httpx.AsyncClient, **payload: Any) -> dict[str, Any]:
    created = await client.post("/v1/keys", json=payload, headers=ADMIN)
    assert created.status_code == 201, created.text
    return dict(created.json())


async def _listed(client: httpx.AsyncClient, key_id: str) -> dict[str, Any]:
    listing = await client.get("/v1/keys", headers=ADMIN)
    return next(k for k in listing.json() if k["id"] == key_id)


async def _published(client: httpx.AsyncClient) -> None:
    await create_series(client)
    publisher = await _create(client, role="publisher")
    posted = await client.post(
        "/v1/series/prison-health/releases?wait=true",
        json=body(1),
        headers=_bearer(publisher["key"]),
    )
    assert posted.status_code == 201, posted.text


async def test_an_expired_key_answers_401_on_every_path(client: httpx.AsyncClient) -> None:
    await _published(client)
    key = await _create(client, role="auditor", expires_at=_in(1.5))
    assert key["expires_at"] is not None
    release = "/v1/series/prison-health/releases/1"
    ledger = f"{release}/ledger"
    # The reader path (cached keys) and the session path both accept it until it expires.
    for path in (release, ledger):
        assert (await client.get(path, headers=_bearer(key["key"]))).status_code == 200
    await asyncio.sleep(1.6)
    for path in (release, ledger, "/v1/series"):
        response = await client.get(path, headers=_bearer(key["key"]))
        assert response.status_code == 401, path
        error = response.json()["error"]
        assert error["code"] == "unauthorized" and "expired" in error["message"]
        assert dt.datetime.fromisoformat(
            error["details"]["expired_at"]
        ) == dt.datetime.fromisoformat(key["expires_at"])
    # Listed still (expired, not revoked), with its expiry.
    assert (await _listed(client, key["id"]))["expires_at"] is not None


@pytest.mark.parametrize(
    ("expires_at", "code"),
    [("2020-01-01T00:00:00Z", "unprocessable"), ("2099-01-01T00:00:00", "invalid_body")],
)
async def test_expiry_in_the_past_or_without_a_zone_is_refused(
    client: httpx.AsyncClient, expires_at: str, code: str
) -> None:
    response = await client.post(
        "/v1/keys", json={"role": "analyst", "expires_at": expires_at}, headers=ADMIN
    )
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == code
    listing = await client.get("/v1/keys", headers=ADMIN)
    assert [k["role"] for k in listing.json()] == ["admin"]


async def test_rotation_keeps_the_old_key_for_its_grace_period(client: httpx.AsyncClient) -> None:
    await create_series(client)
    old = await _create(client, role="analyst", series="prison-health")
    rotated = await client.post(f"/v1/keys/{old['id']}/rotate", headers=ADMIN)
    assert rotated.status_code == 201, rotated.text
    new = rotated.json()
    assert (new["role"], new["series"], new["replaces"]) == ("analyst", "prison-health", old["id"])
    assert new["key"] != old["key"] and new["expires_at"] is None
    grace = dt.datetime.fromisoformat(new["replaced_key_expires_at"]) - dt.datetime.now(dt.UTC)
    assert dt.timedelta(hours=23, minutes=59) < grace <= dt.timedelta(days=1)
    for key in (old, new):
        assert (await client.get("/v1/series", headers=_bearer(key["key"]))).status_code == 200
    listed = await _listed(client, old["id"])
    assert listed["replaced_by"] == new["id"]
    assert dt.datetime.fromisoformat(listed["expires_at"]) == dt.datetime.fromisoformat(
        new["replaced_key_expires_at"]
    )
    again = await client.post(f"/v1/keys/{old['id']}/rotate", headers=ADMIN)
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "key_already_rotated"
    assert again.json()["error"]["details"]["replaced_by"] == new["id"]


async def test_rotation_without_grace_stops_the_old_key_at_once(
    client: httpx.AsyncClient,
) -> None:
    await _published(client)
    old = await _create(client, role="analyst")
    release = "/v1/series/prison-health/releases/1"
    # Cached by the reader path first: the rotation must still stop it at once.
    assert (await client.get(release, headers=_bearer(old["key"]))).status_code == 200
    rotated = await client.post(
        f"/v1/keys/{old['id']}/rotate", json={"grace_seconds": 0}, headers=ADMIN
    )
    assert rotated.status_code == 201, rotated.text
    assert (await client.get(release, headers=_bearer(old["key"]))).status_code == 401
    new = rotated.json()
    assert (await client.get(release, headers=_bearer(new["key"]))).status_code == 200
    # Its expiry came first: rotating it again would revive it.
    expired = await client.post(f"/v1/keys/{old['id']}/rotate", headers=ADMIN)
    assert expired.status_code == 409
    assert expired.json()["error"]["code"] == "key_expired"


async def test_rotating_an_expired_key_is_refused(client: httpx.AsyncClient) -> None:
    key = await _create(client, role="auditor", expires_at=_in(0.5))
    await asyncio.sleep(0.6)
    response = await client.post(f"/v1/keys/{key['id']}/rotate", headers=ADMIN)
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "key_expired"


async def test_the_new_key_lives_as_long_as_the_old_one(client: httpx.AsyncClient) -> None:
    old = await _create(client, role="auditor", expires_at=_in(30 * 86400))
    response = await client.post(
        f"/v1/keys/{old['id']}/rotate", json={"grace_seconds": 3600}, headers=ADMIN
    )
    new = response.json()
    lifetime = dt.datetime.fromisoformat(new["expires_at"]) - dt.datetime.now(dt.UTC)
    assert dt.timedelta(days=29, hours=23) < lifetime <= dt.timedelta(days=30)
    chosen = await client.post(
        f"/v1/keys/{new['id']}/rotate", json={"expires_at": _in(7 * 86400)}, headers=ADMIN
    )
    lifetime = dt.datetime.fromisoformat(chosen.json()["expires_at"]) - dt.datetime.now(dt.UTC)
    assert dt.timedelta(days=6, hours=23) < lifetime <= dt.timedelta(days=7)


@pytest.mark.parametrize(
    ("payload", "status", "code"),
    [
        ({"grace_seconds": -1}, 422, "invalid_body"),
        ({"grace_seconds": 91 * 86400}, 422, "invalid_body"),
        ({"grace": 10}, 422, "invalid_body"),
        ({"expires_at": "2020-01-01T00:00:00Z"}, 422, "unprocessable"),
    ],
)
async def test_bad_rotations_are_refused_and_change_nothing(
    client: httpx.AsyncClient, payload: dict[str, Any], status: int, code: str
) -> None:
    key = await _create(client, role="auditor")
    response = await client.post(f"/v1/keys/{key['id']}/rotate", json=payload, headers=ADMIN)
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code
    listed = await _listed(client, key["id"])
    assert listed["expires_at"] is None and listed["replaced_by"] is None
    assert len((await client.get("/v1/keys", headers=ADMIN)).json()) == 2


async def test_unknown_or_revoked_keys_are_not_rotated(client: httpx.AsyncClient) -> None:
    key = await _create(client, role="auditor")
    assert (await client.delete(f"/v1/keys/{key['id']}", headers=ADMIN)).status_code == 204
    for key_id in (key["id"], "3f1c2a4e-0b5d-4c1e-9a55-6d2f8e7b9c10"):
        response = await client.post(f"/v1/keys/{key_id}/rotate", headers=ADMIN)
        assert response.status_code == 404


async def test_last_use_is_listed(client: httpx.AsyncClient) -> None:
    await _published(client)
    key = await _create(client, role="analyst")
    assert (await _listed(client, key["id"]))["last_used_at"] is None
    before = dt.datetime.now(dt.UTC)
    response = await client.get("/v1/series/prison-health/releases/1", headers=_bearer(key["key"]))
    assert response.status_code == 200
    await TRAIL.flush(client.app.state.runtime.db)  # type: ignore[attr-defined]
    used = (await _listed(client, key["id"]))["last_used_at"]
    assert used is not None and dt.datetime.fromisoformat(used) >= before - dt.timedelta(seconds=1)


async def test_an_expired_admin_token_stays_expired(
    client: httpx.AsyncClient, settings: Any
) -> None:
    from sqlalchemy import update

    from app.db.models import ApiKey

    db = Database(settings.database_url, pool_size=1)
    try:
        async with db.session() as session:
            assert await ensure_admin_token(session, "another-admin-token")
            await session.execute(
                update(ApiKey)
                .where(ApiKey.key_hash == hash_key("another-admin-token"))
                .values(expires_at=dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1))
            )
        async with db.session() as session:
            assert not await ensure_admin_token(session, "another-admin-token")
    finally:
        await db.dispose()
    response = await client.get("/v1/keys", headers=_bearer("another-admin-token"))
    assert response.status_code == 401

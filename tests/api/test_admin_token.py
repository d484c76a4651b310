"""Revoking the bootstrap admin token (SERIALPUB_ADMIN_TOKEN) lasts across restarts."""

from __future__ import annotations

import httpx
import psycopg
import pytest

from app.db.embedded import libpq_url
from app.services.auth import hash_key
from app.settings import Settings
from tests.api.conftest import ADMIN, create_key

pytestmark = [pytest.mark.anyio, pytest.mark.db]


async def test_revoked_bootstrap_token_stays_revoked_after_a_restart(
    client: httpx.AsyncClient, settings: Settings, database_url: str
) -> None:
    from app.runtime import start_runtime

    other_admin = await create_key(client, "admin")
    async with await psycopg.AsyncConnection.connect(libpq_url(database_url)) as conn:
        cur = await conn.execute(
            "SELECT id FROM api_keys WHERE key_hash = %s", (hash_key("test-admin-token"),)
        )
        row = await cur.fetchone()
    assert row is not None
    revoked = await client.delete(f"/v1/keys/{row[0]}", headers=other_admin)
    assert revoked.status_code == 204
    assert (await client.get("/v1/series", headers=ADMIN)).status_code == 401
    # A restart with the same environment.
    runtime = await start_runtime(settings)
    await runtime.db.dispose()
    assert (await client.get("/v1/series", headers=ADMIN)).status_code == 401
    assert (await client.get("/v1/series", headers=other_admin)).status_code == 200

"""Every connection of the service cut at once, the server staying up (a dropped network path,
a load balancer's idle cut, a failover's address move): a small TCP proxy sits between the
service and PostgreSQL and resets what it carries."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from sqlalchemy.engine import make_url

from app.services.renderings import clear_render_cache
from tests.faults.conftest import (
    ADMIN,
    TEXT,
    corpus,
    fault_settings,
    release_numbers,
    serving,
    setup_series,
    wait_status,
)
from tests.support.database import OwnServer
from tests.support.proxy import running_proxy

pytestmark = [pytest.mark.anyio, pytest.mark.db]

URL = "/v1/series/prison-health/releases"


async def test_cut_connections_are_replaced_between_requests_and_during_a_job(
    own_server: OwnServer, slow_core: Callable[[float], None]
) -> None:
    # A database of its own: the session's application (on the same server) runs a worker
    # that would take this test's jobs otherwise.
    url = make_url(await asyncio.to_thread(own_server.database))
    with running_proxy(f"{own_server.socket_dir}/.s.PGSQL.5432") as proxy:
        proxied = url.set(host="127.0.0.1", port=proxy.port, query={})
        settings = fault_settings(proxied.render_as_string(hide_password=False))
        async with serving(settings) as client:
            publisher = await setup_series(client)
            first = await client.post(
                f"{URL}?wait=true", content=corpus(1), headers={**publisher, **TEXT}
            )
            assert first.status_code == 201, first.text
            assert (await client.get(f"{URL}/1", headers=publisher)).status_code == 200

            assert proxy.cut() > 0
            clear_render_cache()  # the stored bytes read again, on the read pool
            assert (await client.get(f"{URL}/1", headers=publisher)).status_code == 200
            assert (await client.get("/v1/series", headers=ADMIN)).status_code == 200
            second = await client.post(
                f"{URL}?wait=true", content=corpus(2), headers={**publisher, **TEXT}
            )
            assert second.status_code == 201, second.text

            slow_core(2.0)
            posted = await client.post(URL, content=corpus(3), headers={**publisher, **TEXT})
            job_id = posted.json()["id"]
            for _ in range(400):
                job = (await client.get(f"/v1/jobs/{job_id}", headers=ADMIN)).json()
                if job["phase"] == "prepare":
                    break
                await asyncio.sleep(0.05)
            assert proxy.cut() > 0
            done = await wait_status(client, job_id)
            assert done["status"] == "succeeded" and done["release_no"] == 3, done
            assert await release_numbers(client) == [1, 2, 3]

"""Through the API: no public document prints the mechanism's randomness, the ledger keeps it,
and a publisher-given seed is warned about on every response."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import httpx
import pytest

from app.settings import Settings
from tests.api.conftest import ADMIN, PAPER_PARAMS, create_key, create_series
from tests.api.paper import body

pytestmark = [pytest.mark.anyio, pytest.mark.db]

URL = "/v1/series/{}/releases"
UNSEEDED = {k: v for k, v in PAPER_PARAMS.items() if k != "seed"}


async def _publish(client: httpx.AsyncClient, name: str, publisher: dict[str, str]) -> list[dict]:
    results = []
    for release in (1, 2):
        response = await client.post(
            f"{URL.format(name)}?wait=true", json=body(release), headers=publisher
        )
        assert response.status_code == 201, response.text
        results.append(response.json())
    return results


async def test_secret_randomness_is_in_the_ledger_only(client: httpx.AsyncClient) -> None:
    series = await create_series(client, name="secret", params=UNSEEDED)
    assert "seed" not in series["params"] and series["params"]["randomness"] == "secret"
    assert series["warnings"] == []
    publisher = await create_key(client, "publisher", "secret")
    analyst = await create_key(client, "analyst")
    auditor = await create_key(client, "auditor")
    for result in await _publish(client, "secret", publisher):
        # Release 2 names neither HIV nor herpes (private_term_not_in_snapshot): no seed.
        assert all(w["code"] != "publisher_seed" for w in result["warnings"])
    secrets_seen = set()
    for no in (1, 2):
        public = await client.get(f"{URL.format('secret')}/{no}", headers=analyst)
        ndjson = await client.get(f"{URL.format('secret')}/{no}?format=ndjson", headers=analyst)
        ledger = await client.get(f"{URL.format('secret')}/{no}/ledger", headers=auditor)
        assert ledger.status_code == 200, ledger.text
        randomness = ledger.json()["randomness"]
        assert randomness["source"] == "secret" and len(randomness["secret"]) == 64
        secrets_seen.add(randomness["secret"])
        for text in (public.text, ndjson.text):
            assert '"seed"' not in text and randomness["secret"] not in text
        assert public.json()["params"]["randomness"] == "secret"
        # Analysts and publishers never see the ledger.
        for key in (analyst, publisher):
            denied = await client.get(f"{URL.format('secret')}/{no}/ledger", headers=key)
            assert denied.status_code == 403
    assert len(secrets_seen) == 2  # one secret per release


async def test_a_publisher_seed_is_warned_about_and_never_printed(
    client: httpx.AsyncClient,
) -> None:
    series = await create_series(client, name="seeded", params={**UNSEEDED, "seed": 918273645})
    assert [w["code"] for w in series["warnings"]] == ["publisher_seed"]
    assert "918273645" not in json.dumps(series)
    publisher = await create_key(client, "publisher", "seeded")
    analyst = await create_key(client, "analyst")
    auditor = await create_key(client, "auditor")
    queued = await client.post(URL.format("seeded"), json=body(1), headers=publisher)
    assert queued.status_code == 202
    assert [w["code"] for w in queued.json()["warnings"]] == ["publisher_seed"]
    dry = await client.post(
        f"{URL.format('seeded')}?dry_run=true&wait=true", json=body(1), headers=publisher
    )
    assert [w["code"] for w in dry.json()["warnings"]] == ["publisher_seed"]
    listed = await client.get("/v1/series/seeded", headers=analyst)
    assert "918273645" not in listed.text
    for _ in range(100):
        released = await client.get(f"{URL.format('seeded')}/1", headers=analyst)
        if released.status_code == 200:
            break
        await asyncio.sleep(0.05)
    assert released.status_code == 200, released.text
    assert "918273645" not in released.text and '"seed"' not in released.text
    assert released.json()["params"]["randomness"] == "publisher_seed"
    ledger = await client.get(f"{URL.format('seeded')}/1/ledger", headers=auditor)
    assert ledger.json()["randomness"] == {"source": "publisher_seed", "seed": 918273645}


async def test_a_secret_is_not_a_parameter(client: httpx.AsyncClient) -> None:
    from tests.api.conftest import ADMIN

    response = await client.post(
        "/v1/series",
        headers=ADMIN,
        json={
            "name": "x",
            "method": "sanony",
            "private_terms": ["HIV"],
            "params": {"secret": "00" * 32},
        },
    )
    assert response.status_code in (400, 422)
    assert "secret" in response.json()["error"]["message"]


@pytest.fixture
def production(client: httpx.AsyncClient) -> Iterator[Settings]:
    """The service as ``SERIALPUB_ENV=production`` runs it (the image's setting)."""
    runtime = client.app.state.runtime  # type: ignore[attr-defined]
    settings = runtime.settings
    runtime.settings = settings.model_copy(update={"environment": "production"})
    try:
        yield runtime.settings
    finally:
        runtime.settings = settings


@pytest.mark.parametrize("method", ["sanony", "anony", "wong", "inv"])
async def test_production_refuses_a_publisher_seed(
    client: httpx.AsyncClient, production: Settings, method: str
) -> None:
    params: dict[str, object] = {"seed": 1} if method in ("wong", "inv") else {"r_th": 2, "seed": 1}
    response = await client.post(
        "/v1/series",
        json={"name": "seeded", "method": method, "private_terms": ["HIV"], "params": params},
        headers=ADMIN,
    )
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_parameter" and error["details"] == {"param": "seed"}
    assert error["message"].startswith("params.seed:") and "production" in error["message"]
    assert (await client.get("/v1/series/seeded", headers=ADMIN)).status_code == 404
    # Without the seed, the same series is created.
    params.pop("seed")
    created = await create_series(client, name="seeded", method=method, params=params)
    assert created["warnings"] == []


async def test_a_test_deployment_may_allow_a_seed_in_production(
    client: httpx.AsyncClient, production: Settings
) -> None:
    runtime = client.app.state.runtime  # type: ignore[attr-defined]
    runtime.settings = production.model_copy(update={"allow_publisher_seed": True})
    created = await create_series(client, name="seeded", params={"r_th": 2, "seed": 1})
    assert [w["code"] for w in created["warnings"]] == ["publisher_seed"]

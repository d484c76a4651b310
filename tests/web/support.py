"""Helpers of the web view's tests: a series published like README's walkthrough, and a
browser-like client signed in through the form."""

from __future__ import annotations

import re
from typing import Any

import httpx

from tests.api.conftest import ADMIN, create_key
from tests.support.database import ROOT

EXAMPLE_YEARS = ("2022", "2023", "2024")
SERIES = "prison-health"


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "the page has no form with an anti-CSRF value"
    return found.group(1)


async def publish_example(
    client: httpx.AsyncClient, years: tuple[str, ...] = EXAMPLE_YEARS
) -> dict[str, str]:
    """README's walkthrough (series prison-health, r_th 2, examples/prison-YEAR.dat posted
    with wait=true); the key of each role, scoped to the series."""
    body = {
        "name": SERIES,
        "private_terms": ["HIV", "cancer", "herpes"],
        "params": {"r_th": 2, "horizon": 3},
    }
    assert (await client.post("/v1/series", json=body, headers=ADMIN)).status_code == 201
    keys = {
        role: (await create_key(client, role, SERIES))["Authorization"].removeprefix("Bearer ")
        for role in ("publisher", "analyst", "auditor")
    }
    for year in years:
        response = await client.post(
            f"/v1/series/{SERIES}/releases?wait=true&label={year}",
            content=(ROOT / "examples" / f"prison-{year}.dat").read_bytes(),
            headers={"Authorization": f"Bearer {keys['publisher']}", "Content-Type": "text/plain"},
        )
        assert response.status_code == 201, response.text
    keys["admin"] = ADMIN["Authorization"].removeprefix("Bearer ")
    return keys


def browser(client: httpx.AsyncClient, base_url: str = "http://test") -> httpx.AsyncClient:
    """A client of its own (its own cookies) on the shared application."""
    app: Any = client.app  # type: ignore[attr-defined]
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=base_url)


async def sign_in(web: httpx.AsyncClient, key: str) -> httpx.Response:
    """Load the sign-in form, post the key with the form's anti-CSRF value."""
    form = await web.get("/web/sign-in")
    assert form.status_code == 200
    return await web.post(
        "/web/sign-in", data={"key": key, "csrf": csrf_of(form.text), "next": "/web/series"}
    )


async def signed_in(client: httpx.AsyncClient, key: str) -> httpx.AsyncClient:
    web = browser(client)
    response = await sign_in(web, key)
    assert response.status_code == 303, response.text
    return web

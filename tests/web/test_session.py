"""Signing in to the web view: the key is posted
once and never comes back in a URL, a cookie or a page; the session cookie is HttpOnly,
SameSite=Strict, Secure over https; forms are CSRF-safe; every page carries the security
headers and is not cached."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import ApiKey, WebSignIn
from app.services.sessions import SESSION_SECONDS
from tests.api.conftest import ADMIN
from tests.web.support import browser, csrf_of, publish_example, sign_in, signed_in

pytestmark = [pytest.mark.anyio, pytest.mark.db]

ADMIN_KEY = ADMIN["Authorization"].removeprefix("Bearer ")


async def test_a_page_sends_a_reader_who_is_not_signed_in_to_the_form(
    client: httpx.AsyncClient,
) -> None:
    web = browser(client)
    response = await web.get("/web/series/prison-health?page=2")
    assert response.status_code == 303
    assert (
        response.headers["location"]
        == "/web/sign-in?next=%2Fweb%2Fseries%2Fprison-health%3Fpage%3D2"
    )
    assert response.headers["cache-control"] == "no-store"


async def test_signing_in_sets_a_strict_http_only_cookie_and_never_shows_the_key(
    client: httpx.AsyncClient,
) -> None:
    web = browser(client)
    response = await sign_in(web, ADMIN_KEY)
    assert response.status_code == 303 and response.headers["location"] == "/web/series"
    cookie = response.headers["set-cookie"]
    assert cookie.startswith("serialpub_session=")
    for attribute in ("HttpOnly", "Path=/web", "SameSite=strict", f"Max-Age={SESSION_SECONDS}"):
        assert attribute in cookie, cookie
    assert "Secure" not in cookie  # plain http: a Secure cookie would never come back
    assert ADMIN_KEY not in cookie and ADMIN_KEY not in response.headers["location"]
    page = await web.get("/web/series")
    assert page.status_code == 200 and ADMIN_KEY not in page.text
    assert 'data-role="admin"' in page.text


async def test_over_https_the_cookie_is_secure(client: httpx.AsyncClient) -> None:
    web = browser(client, "https://test")
    response = await sign_in(web, ADMIN_KEY)
    assert response.status_code == 303
    assert "Secure" in response.headers["set-cookie"]


async def test_an_unknown_key_is_refused_without_echoing_it(client: httpx.AsyncClient) -> None:
    web = browser(client)
    wrong = "sp_not-a-key-anyone-was-given-0123456789abcdef"
    response = await sign_in(web, wrong)
    assert response.status_code == 401
    assert "unknown, revoked or expired" in response.text and wrong not in response.text
    assert "serialpub_session" not in response.headers.get("set-cookie", "")


async def test_the_sign_in_form_must_carry_its_own_anti_csrf_value(
    client: httpx.AsyncClient,
) -> None:
    web = browser(client)
    await web.get("/web/sign-in")
    # Posted without the form's value (a page of another site cannot read it).
    response = await web.post("/web/sign-in", data={"key": ADMIN_KEY, "csrf": "guessed"})
    assert response.status_code == 403
    assert "serialpub_session" not in response.headers.get("set-cookie", "")


async def test_a_form_posted_from_another_site_is_refused(client: httpx.AsyncClient) -> None:
    web = browser(client)
    form = await web.get("/web/sign-in")
    response = await web.post(
        "/web/sign-in",
        data={"key": ADMIN_KEY, "csrf": csrf_of(form.text)},
        headers={"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"},
    )
    assert response.status_code == 403


async def test_signing_in_goes_back_to_the_page_asked_for_but_never_off_site(
    client: httpx.AsyncClient,
) -> None:
    for asked, landed in [
        ("/web/series/x", "/web/series/x"),
        ("//evil.example/web/", "/web/series"),
        ("https://evil.example/", "/web/series"),
        ("/web/sign-out", "/web/series"),
    ]:
        web = browser(client)
        form = await web.get("/web/sign-in")
        response = await web.post(
            "/web/sign-in", data={"key": ADMIN_KEY, "csrf": csrf_of(form.text), "next": asked}
        )
        assert response.headers["location"] == landed, asked


async def test_every_page_carries_the_security_headers(client: httpx.AsyncClient) -> None:
    web = await signed_in(client, ADMIN_KEY)
    for path in ("/web/series", "/web/sign-in", "/web/series/missing", "/web/nowhere"):
        response = await web.get(path)
        csp = response.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "style-src 'self'" in csp, path
        assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
        assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["x-frame-options"] == "DENY"
        assert response.headers["cache-control"] == "no-store"
        assert "<script>" not in response.text and " style=" not in response.text, path
    assert (await web.get("/web/nowhere")).status_code == 404


async def _key(client: httpx.AsyncClient, **payload: Any) -> dict[str, Any]:
    created = await client.post("/v1/keys", json={"role": "auditor", **payload}, headers=ADMIN)
    assert created.status_code == 201, created.text
    return dict(created.json())


async def _signed_out(web: httpx.AsyncClient) -> bool:
    """The page answers as to a reader who is not signed in (to the sign-in form)."""
    response = await web.get("/web/series")
    return response.status_code == 303 and response.headers["location"].startswith("/web/sign-in")


async def test_a_revoked_key_ends_its_sessions(client: httpx.AsyncClient) -> None:
    key = await _key(client)
    web = await signed_in(client, key["key"])
    assert (await web.get("/web/series")).status_code == 200
    assert (await client.delete(f"/v1/keys/{key['id']}", headers=ADMIN)).status_code == 204
    assert await _signed_out(web)


async def _expire(session: AsyncSession, key_id: str) -> None:
    """Move the key's expiry into the past, as the clock would."""
    await session.execute(
        update(ApiKey)
        .where(ApiKey.id == uuid.UUID(key_id))
        .values(expires_at=func.now() - dt.timedelta(seconds=1))
    )
    await session.commit()


async def test_a_key_that_expires_ends_its_sessions_at_once(
    client: httpx.AsyncClient, session: AsyncSession
) -> None:
    ends = dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)
    key = await _key(client, expires_at=ends.isoformat())
    web = browser(client)
    response = await sign_in(web, key["key"])
    assert response.status_code == 303
    # The cookie lives no longer than its key.
    max_age = int(response.headers["set-cookie"].split("Max-Age=")[1].split(";")[0])
    assert 0 < max_age <= 3600
    assert (await web.get("/web/series")).status_code == 200
    await _expire(session, key["id"])
    api = await client.get("/v1/series", headers={"Authorization": f"Bearer {key['key']}"})
    assert api.status_code == 401
    assert await _signed_out(web)
    # Nor does the form take it again.
    refused = await sign_in(browser(client), key["key"])
    assert refused.status_code == 401 and "expired" in refused.text


@pytest.mark.parametrize("grace", [0, 3600])
async def test_a_rotated_key_s_sessions_end_when_its_grace_does(
    client: httpx.AsyncClient, grace: int
) -> None:
    key = await _key(client)
    web = await signed_in(client, key["key"])
    rotated = await client.post(
        f"/v1/keys/{key['id']}/rotate", json={"grace_seconds": grace}, headers=ADMIN
    )
    assert rotated.status_code == 201, rotated.text
    old_api = await client.get("/v1/series", headers={"Authorization": f"Bearer {key['key']}"})
    # The web view answers as the API does: with no grace the old key reads nothing more.
    assert old_api.status_code == (401 if grace == 0 else 200)
    assert await _signed_out(web) == (grace == 0)
    fresh = await signed_in(client, rotated.json()["key"])
    assert (await fresh.get("/web/series")).status_code == 200


async def test_a_forged_session_cookie_is_no_session(client: httpx.AsyncClient) -> None:
    web = await signed_in(client, ADMIN_KEY)
    token = web.cookies["serialpub_session"]
    payload, _, signature = token.rpartition(".")
    web.cookies.set("serialpub_session", payload + "." + signature[::-1], path="/web")
    assert (await web.get("/web/series")).status_code == 303


async def test_signing_out_needs_the_page_s_value_and_clears_the_session(
    client: httpx.AsyncClient,
) -> None:
    await publish_example(client, ("2022",))
    web = await signed_in(client, ADMIN_KEY)
    page = await web.get("/web/series")
    refused = await web.post("/web/sign-out", data={"csrf": "guessed"})
    assert refused.status_code == 403
    assert (await web.get("/web/series")).status_code == 200
    done = await web.post("/web/sign-out", data={"csrf": csrf_of(page.text)})
    assert done.status_code == 303 and 'serialpub_session=""' in done.headers["set-cookie"]
    assert (await web.get("/web/series")).status_code == 303


async def test_signing_out_ends_the_session_on_the_service(
    client: httpx.AsyncClient, session: AsyncSession
) -> None:
    key = await _key(client)
    web, elsewhere = await signed_in(client, key["key"]), await signed_in(client, key["key"])
    copied = web.cookies["serialpub_session"]
    page = await web.get("/web/series")
    assert (await web.post("/web/sign-out", data={"csrf": csrf_of(page.text)})).status_code == 303
    # A copy of the cookie, taken before signing out, reads nothing more.
    thief = browser(client)
    thief.cookies.set("serialpub_session", copied, path="/web")
    assert await _signed_out(thief)
    # The key's other sign-in (another browser) goes on.
    assert (await elsewhere.get("/web/series")).status_code == 200
    left = await session.scalar(
        select(func.count()).select_from(WebSignIn).where(WebSignIn.key_id == uuid.UUID(key["id"]))
    )
    assert left == 1

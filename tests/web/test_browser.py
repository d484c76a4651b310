"""The web view in a real browser, as a person uses it: Debian's chromium driven by
Playwright (never Playwright's own browser build) against ``serialpub serve`` on a loopback
port, with README's walkthrough published in it.

Each page loads without a console error (a script or style the Content-Security-Policy
refused would be one); its figures equal the API's; a role's forbidden figures are absent;
tables read without JavaScript; a publisher watches its job finish without reloading; the
series page's screenshot is written to ``test-output/web/web-series.png`` (docs/web.md); a
newcomer reaches the series page from ``serialpub serve`` and from ``serialpub demo --serve``
within a minute.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from app.db.embedded import libpq_url
from app.demo import generate_snapshots
from tests.support.database import ROOT, fresh_database
from tests.support.demo import database_exists, demo_database

pytestmark = [pytest.mark.db, pytest.mark.slow]

CHROMIUM = Path("/usr/bin/chromium")
#: Chromium's options here: no sandbox (root in a container), no network beyond loopback.
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: Where a person finds the screenshots after a run (kept out of git).
OUTPUT = ROOT / "test-output" / "web"
ADMIN_TOKEN = "web-test-admin-token-0123456789abcdefghij"
SERIES = "prison-health"
#: What only auditors and admins read, as the pages mark it.
AUDITORS_ONLY = ("#verdict", '[data-field="max_serial_risk"]', "#jobs", "#risk", "#row-risk")

if not CHROMIUM.exists():
    # .ci/run installs Debian's chromium; elsewhere say how.
    if os.environ.get("CI"):
        raise RuntimeError(f"{CHROMIUM} is missing: apt-get install -y chromium")
    pytest.skip(
        f"no {CHROMIUM}: apt-get update && apt-get install -y chromium", allow_module_level=True
    )
sync_api = pytest.importorskip("playwright.sync_api")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "SERIALPUB_"))}
    env.update(PYTHONPATH=str(ROOT), **extra)
    return env


@dataclass
class Served:
    """``serialpub serve`` with README's walkthrough published; its keys and timings."""

    base_url: str
    keys: dict[str, str]
    started: float
    log: Path
    database_url: str
    seconds: dict[str, float] = field(default_factory=dict)

    def api(self, path: str, role: str = "admin", method: str = "GET", body: Any = None) -> Any:
        headers = {"Authorization": f"Bearer {self.keys[role]}"}
        response = httpx.request(
            method, self.base_url + path, headers=headers, timeout=60, json=body
        )
        response.raise_for_status()
        return response.json() if response.content else None


def _publish_walkthrough(base_url: str) -> dict[str, str]:
    """README's walkthrough over HTTP: the series, a key per role, three yearly releases."""
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    with httpx.Client(base_url=base_url, timeout=120) as http:
        body = {
            "name": SERIES,
            "private_terms": ["HIV", "cancer", "herpes"],
            "params": {"r_th": 2, "horizon": 3},
        }
        assert http.post("/v1/series", json=body, headers=admin).status_code == 201
        keys = {"admin": ADMIN_TOKEN}
        for role in ("publisher", "analyst", "auditor"):
            created = http.post("/v1/keys", json={"role": role, "series": SERIES}, headers=admin)
            keys[role] = created.json()["key"]
        for year in ("2022", "2023", "2024"):
            response = http.post(
                f"/v1/series/{SERIES}/releases?wait=true&label={year}",
                content=(ROOT / "examples" / f"prison-{year}.dat").read_bytes(),
                headers={
                    "Authorization": f"Bearer {keys['publisher']}",
                    "Content-Type": "text/plain",
                },
            )
            assert response.status_code == 201, response.text
    return keys


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with fresh_database() as url, log.open("w") as out:
        port = _free_port()
        started = time.monotonic()
        process = subprocess.Popen(
            [sys.executable, "-m", "app", "serve", "--port", str(port)],
            cwd=ROOT,
            env=_environment(
                DATABASE_URL=url,
                SERIALPUB_ADMIN_TOKEN=ADMIN_TOKEN,
                SERIALPUB_SECRET="web-test-secret-for-hmac",
                SERIALPUB_LOG_LEVEL="INFO",
            ),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            base_url = f"http://127.0.0.1:{port}"
            for _ in range(600):
                try:
                    if httpx.get(base_url + "/readyz", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                assert process.poll() is None, log.read_text()
                time.sleep(0.1)
            ready = time.monotonic()
            keys = _publish_walkthrough(base_url)
            seconds = {"serve": ready - started, "walkthrough": time.monotonic() - ready}
            yield Served(base_url, keys, started, log, url, seconds)
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class Reader:
    """A browser tab signed in as one role, with every console error it saw."""

    page: Any
    errors: list[str]

    def go(self, url: str) -> Any:
        response = self.page.goto(url)
        assert response is not None and response.status == 200, (url, response and response.status)
        return response


def _open(
    chromium: Any, served: Served, role: str, javascript: bool = True, key: str | None = None
) -> Reader:
    """A tab signed in through the form with ``role``'s key (or ``key``)."""
    context = chromium.new_context(
        viewport={"width": 1280, "height": 900}, java_script_enabled=javascript
    )
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{served.base_url}/web/series/{SERIES}")
    assert "/web/sign-in" in page.url  # not signed in: the form, which brings us back
    page.fill("#key", key or served.keys[role])
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(rf".*/web/series/{SERIES}$"))
    assert (key or served.keys[role]) not in page.url
    return Reader(page, errors)


def _closed(reader: Reader) -> None:
    reader.page.context.close()


def test_a_newcomer_reaches_the_series_page_from_serve_within_a_minute(
    served: Served, chromium: Any
) -> None:
    reader = _open(chromium, served, "auditor")
    total = time.monotonic() - served.started
    print(
        f"serve ready {served.seconds['serve']:.1f} s, walkthrough "
        f"{served.seconds['walkthrough']:.1f} s, series page at {total:.1f} s"
    )
    assert reader.page.inner_text("h1") == SERIES
    assert total < 60
    assert reader.errors == []
    _closed(reader)


@pytest.mark.parametrize("address", ["/", "/web/"])
def test_the_documented_address_opens_the_web_view(
    served: Served, chromium: Any, address: str
) -> None:
    """docs/web.md's ``/web/`` and the service's own address: the sign-in form, then the
    series list."""
    context = chromium.new_context()
    page = context.new_page()
    response = page.goto(served.base_url + address)
    assert response is not None and response.status == 200
    assert "/web/sign-in" in page.url
    page.fill("#key", served.keys["analyst"])
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r".*/web/series$"))
    assert page.inner_text("h1") == "Series"
    assert page.locator(f'tr[data-series="{SERIES}"]').count() == 1
    context.close()


@pytest.mark.parametrize("role", ["admin", "auditor", "analyst", "publisher"])
def test_every_page_loads_without_a_console_error(served: Served, chromium: Any, role: str) -> None:
    reader = _open(chromium, served, role)
    base = f"{served.base_url}/web/series/{SERIES}"
    pages = ["/web/series", f"/web/series/{SERIES}", f"/web/series/{SERIES}/counts"]
    pages += [f"/web/series/{SERIES}/releases/{no}" for no in (1, 2, 3)]
    pages += [f"/web/series/{SERIES}/counts?term=herpes", f"/web/series/{SERIES}/releases/2?page=1"]
    for path in pages:
        reader.go(served.base_url + path)
        assert reader.page.locator("svg.chart, table.data").count() > 0, path
        assert _blanks(reader.page) == [], path
    if role in ("admin", "auditor", "publisher"):
        reader.go(base)
        job = reader.page.locator("#jobs a").first.get_attribute("href")
        reader.go(served.base_url + job)
        assert reader.page.locator("#job").get_attribute("data-status") == "succeeded"
        # The walkthrough's series asks for no semantic audit: its chip is not green.
        attack = reader.page.locator('#job-phases li[data-phase="attack"]')
        assert attack.get_attribute("class") == "skipped" and "not run" in attack.inner_text()
        store = reader.page.locator('#job-phases li[data-phase="store"]')
        assert store.get_attribute("class") == "done"
    assert reader.errors == [], (role, reader.errors)
    _closed(reader)


#: Tables with no body row, rows of a cluster or cells of the riskiest rows with no text.
_BLANKS = """() => [
  ...[...document.querySelectorAll("table.data")]
    .filter(t => t.tBodies.length && t.tBodies[0].rows.length === 0)
    .map(t => "empty table #" + t.id),
  ...[...document.querySelectorAll("ol.rows li, #row-risk td")]
    .filter(n => n.textContent.trim() === "")
    .map(n => "blank " + n.tagName),
]"""


def _blanks(page: Any) -> list[str]:
    found: list[str] = page.evaluate(_BLANKS)
    return found


def _cell(reader: Reader, release_no: int, name: str) -> str:
    text: str = reader.page.inner_text(f'tr[data-release="{release_no}"] [data-field="{name}"]')
    return text.split()[0].replace(",", "")


def test_the_series_page_shows_the_api_s_figures(served: Served, chromium: Any) -> None:
    reader = _open(chromium, served, "auditor")
    risk = served.api(f"/v1/series/{SERIES}/risk", "auditor")
    for summary in risk:
        no = summary["release_no"]
        document = served.api(f"/v1/series/{SERIES}/releases/{no}", "analyst")
        copies = sum(document["global_bag"].values()) + sum(
            n for c in document["clusters"] for n in c["private_terms"].values()
        )
        assert int(_cell(reader, no, "n_rows")) == document["n_rows"]
        assert int(_cell(reader, no, "private_copies")) == copies
        assert int(_cell(reader, no, "counterfeit_rows")) == document["counterfeit_rows"]
        assert _cell(reader, no, "guarantee") == document["guarantee"]
        assert int(_cell(reader, no, "rows_over_threshold")) == summary["rows_over_threshold"]
        shown = reader.page.get_attribute(
            f'tr[data-release="{no}"] [data-field="max_serial_risk"]', "data-value"
        )
        assert float(shown) == summary["max_serial_risk"]
        # The charts draw the same figures.
        bar = f'rect[data-series="rows"][data-category="{no}"]'
        assert float(reader.page.get_attribute(bar, "data-value")) == document["n_rows"]
        dot = reader.page.get_attribute(f'circle.max[data-category="{no}"]', "data-value")
        assert float(dot) == pytest.approx(summary["max_serial_risk"], rel=1e-5)
    verdict = reader.page.get_attribute("#verdict [data-conclusion]", "data-conclusion")
    assert verdict == "pass"  # README's series: every row within r_th (tests/web/test_figures)
    assert reader.errors == []
    _closed(reader)


def test_an_analyst_s_pages_hold_none_of_the_auditors_figures(
    served: Served, chromium: Any
) -> None:
    analyst, auditor = _open(chromium, served, "analyst"), _open(chromium, served, "auditor")
    for path in (f"/web/series/{SERIES}", f"/web/series/{SERIES}/releases/3"):
        analyst.go(served.base_url + path)
        auditor.go(served.base_url + path)
        held = [s for s in AUDITORS_ONLY if auditor.page.locator(s).count()]
        assert held, path
        assert [s for s in AUDITORS_ONLY if analyst.page.locator(s).count()] == [], path
        assert "Serial risk" not in analyst.page.content()
    refused = analyst.page.goto(f"{served.base_url}/web/series/another-series")
    assert refused is not None and refused.status == 403
    _closed(analyst)
    _closed(auditor)


def test_the_series_page_s_screenshot(served: Served, chromium: Any, tmp_path: Path) -> None:
    """Written where a person opens it after the run (docs/figures/web-series.png is one)."""
    reader = _open(chromium, served, "auditor")
    OUTPUT.mkdir(parents=True, exist_ok=True)
    for target in (OUTPUT / "web-series.png", tmp_path / "web-series.png"):
        reader.page.screenshot(path=str(target), full_page=True)
        assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and target.stat().st_size > 20_000
    reader.go(f"{served.base_url}/web/series/{SERIES}/counts?term=herpes")
    reader.page.screenshot(path=str(OUTPUT / "web-counts.png"), full_page=True)
    reader.go(f"{served.base_url}/web/series/{SERIES}/releases/2")
    reader.page.screenshot(path=str(OUTPUT / "web-release.png"), full_page=True)
    assert reader.errors == []
    _closed(reader)


def test_the_tables_read_without_javascript(served: Served, chromium: Any) -> None:
    reader = _open(chromium, served, "analyst", javascript=False)
    assert reader.page.locator("#releases tbody tr").count() == 3
    reader.go(f"{served.base_url}/web/series/{SERIES}/releases/1")
    assert reader.page.locator("#clusters tbody tr").count() > 0
    reader.go(f"{served.base_url}/web/series/{SERIES}/counts?term=HIV")
    assert reader.page.locator("#counts tbody tr").count() == 3
    _closed(reader)


def test_a_publisher_watches_its_job_finish_without_reloading(
    served: Served, chromium: Any
) -> None:
    (snapshot,) = generate_snapshots(years=1, size=20_000, seed=3)
    body = "".join(" ".join(t) + "\n" for t in snapshot).encode()
    posted = httpx.post(
        f"{served.base_url}/v1/series/{SERIES}/releases?label=live",
        content=body,
        headers={
            "Authorization": f"Bearer {served.keys['publisher']}",
            "Content-Type": "text/plain",
        },
        timeout=120,
    )
    assert posted.status_code == 202, posted.text
    job = posted.json()["id"]
    reader = _open(chromium, served, "publisher")
    reader.go(f"{served.base_url}/web/jobs/{job}")
    first = reader.page.locator("#job").get_attribute("data-status")
    assert first in ("queued", "running"), "the job ended before its page loaded"
    # The page's script follows the job: no navigation from here on.
    reader.page.wait_for_selector('#job[data-status="succeeded"]', timeout=300_000)
    assert reader.page.locator("#job-release").is_visible()
    assert reader.page.inner_text("#job-phase") in ("store", "risk", "attack")
    assert reader.errors == []
    _closed(reader)


def test_a_withdrawn_release_is_marked_and_no_link_leads_an_analyst_to_a_410(
    served: Served, chromium: Any
) -> None:
    name = "withdrawn-example"
    # The paper's mode: its releases publish copies of private terms (the walkthrough's none).
    params = {"guarantee": "paper", "r_th": 2}
    series = {"name": name, "private_terms": ["HIV", "cancer", "herpes"], "params": params}
    served.api("/v1/series", method="POST", body=series)
    for year in ("2022", "2023"):
        posted = httpx.post(
            f"{served.base_url}/v1/series/{name}/releases?wait=true&label={year}",
            content=(ROOT / "examples" / f"prison-{year}.dat").read_bytes(),
            headers={"Authorization": f"Bearer {ADMIN_TOKEN}", "Content-Type": "text/plain"},
            timeout=120,
        )
        assert posted.status_code == 201, posted.text
    served.api(
        f"/v1/series/{name}/releases/1/withdraw", method="POST", body={"reason": "posted twice"}
    )
    key = served.api("/v1/keys", method="POST", body={"role": "analyst"})
    reader = _open(chromium, served, "analyst", key=key["key"])
    for path in (f"/web/series/{name}", f"/web/series/{name}/counts?term=HIV"):
        reader.go(served.base_url + path)
        row = reader.page.locator('tr[data-release="1"]')
        assert "withdrawn" in (row.get_attribute("class") or ""), path
        assert "posted twice" in row.inner_text(), path
        assert row.locator("a").count() == 0, path
        links = reader.page.eval_on_selector_all(
            'a[href^="/web/"]', "nodes => nodes.map(n => n.getAttribute('href'))"
        )
        for link in links:
            answer = reader.page.request.get(served.base_url + link)
            assert answer.status != 410, (path, link)
    # A term and its count read apart: "HIV: 2", not "HIV 2".
    for path in (f"/web/series/{name}", f"/web/series/{name}/releases/2"):
        reader.go(served.base_url + path)
        spans = reader.page.locator("span[data-term][data-value]")
        assert spans.count() > 0, path
        for i in range(spans.count()):
            span = spans.nth(i)
            term, value = span.get_attribute("data-term"), span.get_attribute("data-value")
            assert span.inner_text() == f"{term}: {value}", path
        assert _blanks(reader.page) == [], path
    assert reader.errors == []
    _closed(reader)


def _signed_out(page: Any, url: str) -> bool:
    """Loading ``url`` lands on the sign-in form, and none of the series' figures show."""
    page.goto(url)
    return "/web/sign-in" in page.url and page.locator("#releases, #risk").count() == 0


@pytest.mark.parametrize("end", ["revoked", "rotated", "expired"])
def test_a_session_ends_with_its_key(served: Served, chromium: Any, end: str) -> None:
    """After its key is revoked, rotated without grace or past its expiry, the next page is
    the sign-in form (the API answers 401 to the same key)."""
    key = served.api("/v1/keys", method="POST", body={"role": "auditor"})
    reader = _open(chromium, served, "auditor", key=key["key"])
    page_url = f"{served.base_url}/web/series/{SERIES}/releases/1"
    reader.go(page_url)
    assert reader.page.locator("#risk").count() == 1
    if end == "revoked":
        served.api(f"/v1/keys/{key['id']}", method="DELETE")
    elif end == "rotated":
        served.api(f"/v1/keys/{key['id']}/rotate", method="POST", body={"grace_seconds": 0})
    else:
        with psycopg.connect(libpq_url(served.database_url), autocommit=True) as conn:
            conn.execute(
                "UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = %s",
                (key["id"],),
            )
    refused = httpx.get(
        f"{served.base_url}/v1/series/{SERIES}/releases/1/risk",
        headers={"Authorization": f"Bearer {key['key']}"},
    )
    assert refused.status_code == 401
    assert _signed_out(reader.page, page_url), end
    _closed(reader)


def test_signing_out_ends_the_session_on_the_service(served: Served, chromium: Any) -> None:
    """A copy of the session cookie, taken before signing out, reads nothing afterwards."""
    reader = _open(chromium, served, "auditor")
    copied = reader.page.context.cookies()
    assert any(c["name"] == "serialpub_session" for c in copied)
    reader.page.click("header.top form button[type=submit]")
    reader.page.wait_for_url(re.compile(r".*/web/sign-in$"))
    thief = chromium.new_context()
    thief.add_cookies(copied)
    assert _signed_out(thief.new_page(), f"{served.base_url}/web/series/{SERIES}")
    thief.close()
    assert reader.errors == []
    _closed(reader)


def test_a_browser_s_page_loads_and_downloads_are_in_the_access_trail(
    served: Served, chromium: Any
) -> None:
    """The same actions as the API's reads, each with the key that signed in."""
    key = served.api("/v1/keys", method="POST", body={"role": "auditor", "series": SERIES})
    reader = _open(chromium, served, "auditor", key=key["key"])
    reader.go(f"{served.base_url}/web/series/{SERIES}/releases/1")
    with reader.page.expect_download() as download:
        reader.page.click('a[href$="/releases/1/release.json"]')
    assert download.value.suggested_filename == f"{SERIES}-1-release.json"
    events = served.api(f"/v1/access-trail?key_id={key['id']}")["events"]
    seen = sorted(
        (e["action"], e["release_no"] or 0, e["details"].get("file", ""), e["status"])
        for e in events
        if e["details"].get("via") == "web"
    )
    assert seen == [
        ("cover.read", 1, "", 200),
        ("release.list", 0, "", 200),  # the series page the sign-in landed on
        ("release.read", 1, "", 200),
        ("release.read", 1, "release.json", 200),
        ("risk.read", 0, "", 200),
        ("risk.read", 1, "", 200),
    ]
    assert {e["role"] for e in events} == {"auditor"}
    assert reader.errors == []
    _closed(reader)


def test_keys_are_never_written_to_the_service_s_log(served: Served, chromium: Any) -> None:
    for role in ("admin", "analyst"):
        _closed(_open(chromium, served, role))
    log = served.log.read_text()
    assert "service started" in log  # the service's own log, at INFO
    for role, key in served.keys.items():
        assert key not in log, role


def test_the_demo_serves_its_series_page(chromium: Any) -> None:
    """``serialpub demo --serve``: its printed address and key reach the series page within
    a minute; Ctrl-C ends it and removes its database."""
    with fresh_database() as url:
        started = time.monotonic()
        process = subprocess.Popen(
            [sys.executable, "-m", "app", "demo", "--years", "2", "--serve"],
            cwd=ROOT,
            env=_environment(DATABASE_URL=url, SERIALPUB_LOG_LEVEL="WARNING"),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        assert process.stdout is not None
        lines: list[str] = []
        try:
            for line in process.stdout:
                lines.append(line)
                if line.startswith("serving until Ctrl-C"):
                    break
            output = "".join(lines)
            page_url = re.search(r"the series at a glance: (\S+)", output)
            key = re.search(r"^  auditor key: +(\S+)", output, re.MULTILINE)
            assert page_url and key, output
            context = chromium.new_context()
            page = context.new_page()
            page.goto(page_url.group(1))
            page.fill("#key", key.group(1))
            page.click("button[type=submit]")
            page.wait_for_url(page_url.group(1))
            name = page_url.group(1).rsplit("/", 1)[1]
            assert page.inner_text("h1") == name
            assert page.locator("#releases tbody tr").count() == 2
            elapsed = time.monotonic() - started
            print(f"demo: series page reached {elapsed:.1f} s after the command started")
            assert elapsed < 60
            context.close()
            process.send_signal(signal.SIGINT)
            rest, _ = process.communicate(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
                process.communicate()
        assert process.returncode == 128 + signal.SIGINT, rest
        assert "the demo's throw-away database is gone" in rest
        assert not database_exists(url, demo_database(lines))

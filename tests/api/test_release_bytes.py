"""Releases and risk summaries served as stored bytes: validators, codings, ranges, HEAD."""

from __future__ import annotations

import gzip
import json
from typing import Any

import httpx
import psycopg
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.embedded import libpq_url
from app.db.models import Release, Series
from app.db.repositories.release_load import load_releases
from app.db.repositories.renderings import insert_document
from app.io.public import release_header
from app.io.rendering import gunzip, render_document, render_release
from app.services.renderings import (
    clear_render_cache,
    configure_memory,
    render_missing,
    stream_document,
)
from tests.api.conftest import ADMIN, create_key, create_series
from tests.api.paper import body

pytestmark = [pytest.mark.anyio, pytest.mark.db]

URL = "/v1/series/prison-health/releases/1"
IDENTITY = {"Accept-Encoding": "identity"}


async def _publish(client: httpx.AsyncClient, releases: int = 1) -> dict[str, str]:
    """Series, ``releases`` releases of the paper's example, and an analyst key."""
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    for release in range(1, releases + 1):
        response = await client.post(
            "/v1/series/prison-health/releases?wait=true", json=body(release), headers=publisher
        )
        assert response.status_code == 201, response.text
    return await create_key(client, "analyst")


async def _raw(
    client: httpx.AsyncClient, url: str, headers: dict[str, str]
) -> tuple[httpx.Response, bytes]:
    """The response and its body as sent (httpx would inflate gzip)."""
    async with client.stream("GET", url, headers=headers) as response:
        return response, b"".join([part async for part in response.aiter_raw()])


async def _rendered_now(session: AsyncSession, release_no: int) -> tuple[bytes, bytes]:
    """The JSON and NDJSON of the release loaded back from its rows, rendered afresh."""
    series = await session.scalar(select(Series).where(Series.name == "prison-health"))
    assert series is not None
    model = await session.scalar(
        select(Release).where(Release.series_id == series.id, Release.release_no == release_no)
    )
    assert model is not None
    (release,) = await load_releases(session, [model], cache=None)
    header = release_header(
        release,
        series.name,
        model.method,
        model.params,
        release_no=model.release_no,
        label=model.label,
    )
    as_json, as_ndjson = render_release(header, release.clusters)
    return gunzip(as_json.gzip), gunzip(as_ndjson.gzip)


async def test_bytes_served_are_the_release_rendering(
    client: httpx.AsyncClient, session: AsyncSession
) -> None:
    analyst = await _publish(client, releases=2)
    expected_json, expected_ndjson = await _rendered_now(session, 2)
    url = "/v1/series/prison-health/releases/2"
    served = await client.get(url, headers={**analyst, **IDENTITY})
    assert served.status_code == 200 and "content-encoding" not in served.headers
    assert served.headers["content-type"] == "application/json"
    # Rendered from the publication's objects, equal to a rendering of the stored rows.
    assert served.content == expected_json
    document = json.loads(served.content)
    assert set(document) == {
        "series",
        "release_no",
        "label",
        "method",
        "guarantee",
        "params",
        "n_rows",
        "population_rates",
        "global_bag",
        "global_counterfeits",
        "counterfeit_rows",
        "suppression_beyond_budget",
        "clusters",
    }
    assert all(
        set(c) == {"cluster_id", "rows", "private_terms", "global_share", "counterfeits"}
        for c in document["clusters"]
    )
    ndjson = await client.get(f"{url}?format=ndjson", headers={**analyst, **IDENTITY})
    assert ndjson.headers["content-type"] == "application/x-ndjson"
    assert ndjson.content == expected_ndjson
    lines = [json.loads(line) for line in ndjson.content.splitlines()]
    assert {**lines[0], "clusters": lines[1:]} == document


async def test_etag_and_conditional_requests(client: httpx.AsyncClient) -> None:
    analyst = await _publish(client)
    first = await client.get(URL, headers={**analyst, **IDENTITY})
    etag = first.headers["etag"]
    assert etag.startswith('"') and etag.endswith('"') and len(etag) == 34
    assert first.headers["cache-control"] == "private, max-age=31536000, immutable"
    assert first.headers["vary"] == "Accept-Encoding"
    for tag in (etag, f"W/{etag}", f'"{etag[1:-1]}-gzip"', f'"other", {etag}', "*"):
        again = await client.get(URL, headers={**analyst, **IDENTITY, "If-None-Match": tag})
        assert again.status_code == 304, tag
        assert again.content == b"" and again.headers["etag"] == etag
    changed = await client.get(URL, headers={**analyst, **IDENTITY, "If-None-Match": '"x"'})
    assert changed.status_code == 200 and changed.content == first.content
    ndjson = await client.get(f"{URL}?format=ndjson", headers={**analyst, **IDENTITY})
    assert ndjson.headers["etag"] != etag


async def test_roles_are_checked_before_a_304(client: httpx.AsyncClient) -> None:
    analyst = await _publish(client)
    await create_series(client, name="other-series")
    etag = (await client.get(URL, headers=analyst)).headers["etag"]
    condition = {"If-None-Match": etag}
    assert (await client.get(URL, headers=condition)).status_code == 401
    unknown = {"Authorization": "Bearer nope", **condition}
    assert (await client.get(URL, headers=unknown)).status_code == 401
    stranger = await create_key(client, "publisher", "other-series")
    forbidden = await client.get(URL, headers={**stranger, **condition})
    assert forbidden.status_code == 403 and forbidden.json()["error"]["code"] == "forbidden"
    assert (await client.head(URL, headers={**stranger, **condition})).status_code == 403


@pytest.mark.parametrize(
    ("accept", "coded"),
    [
        ("gzip", True),
        ("gzip, deflate, br", True),
        ("*", True),
        ("br;q=1, gzip;q=0.5", True),
        ("identity", False),
        ("gzip;q=0", False),
        ("*;q=0", False),
        ("br", False),
        (None, False),
    ],
)
async def test_gzip_by_accept_encoding(
    client: httpx.AsyncClient, accept: str | None, coded: bool
) -> None:
    analyst = await _publish(client)
    identity = (await client.get(URL, headers={**analyst, **IDENTITY})).content
    response, content = await _raw(client, URL, {**analyst, "Accept-Encoding": accept or ""})
    assert response.status_code == 200
    assert int(response.headers["content-length"]) == len(content)
    if coded:
        assert response.headers["content-encoding"] == "gzip"
        assert response.headers["etag"].endswith('-gzip"')
        assert gzip.decompress(content) == identity
    else:
        assert "content-encoding" not in response.headers
        assert content == identity


async def test_head_answers_the_headers_only(client: httpx.AsyncClient) -> None:
    analyst = await _publish(client)
    for headers in ({**analyst, **IDENTITY}, {**analyst, "Accept-Encoding": "gzip"}):
        got, content = await _raw(client, URL, headers)
        head = await client.head(URL, headers=headers)
        assert head.status_code == 200 and head.content == b""
        assert head.headers["content-length"] == str(len(content))
        assert head.headers["etag"] == got.headers["etag"]
        assert head.headers.get("content-encoding") == got.headers.get("content-encoding")
    missing = await client.head("/v1/series/prison-health/releases/7", headers=analyst)
    assert missing.status_code == 404


async def _ranges(client: httpx.AsyncClient, analyst: dict[str, str]) -> None:
    whole = (await client.get(URL, headers={**analyst, **IDENTITY})).content
    size = len(whole)
    cases: list[tuple[str, int, int]] = [
        ("bytes=0-99", 0, 99),
        ("bytes=100-", 100, size - 1),
        ("bytes=-50", size - 50, size - 1),
        (f"bytes=10-{size + 500}", 10, size - 1),
        (f"bytes={size - 1}-{size - 1}", size - 1, size - 1),
    ]
    for header, start, end in cases:
        part = await client.get(URL, headers={**analyst, **IDENTITY, "Range": header})
        assert part.status_code == 206, header
        assert part.headers["content-range"] == f"bytes {start}-{end}/{size}"
        assert part.content == whole[start : end + 1], header
    beyond = await client.get(URL, headers={**analyst, **IDENTITY, "Range": f"bytes={size}-"})
    assert beyond.status_code == 416 and beyond.headers["content-range"] == f"bytes */{size}"
    assert beyond.json()["error"]["code"] == "range_not_satisfiable"
    for ignored in ("bytes=0-1,5-9", "items=0-5", "bytes=9-3"):
        full = await client.get(URL, headers={**analyst, **IDENTITY, "Range": ignored})
        assert full.status_code == 200 and full.content == whole
    stale = await client.get(
        URL, headers={**analyst, **IDENTITY, "Range": "bytes=0-9", "If-Range": '"old"'}
    )
    assert stale.status_code == 200 and stale.content == whole
    coded, coded_bytes = await _raw(client, URL, {**analyst, "Accept-Encoding": "gzip"})
    head, head_bytes = await _raw(
        client,
        URL,
        {
            **analyst,
            "Accept-Encoding": "gzip",
            "Range": "bytes=0-19",
            "If-Range": coded.headers["etag"],
        },
    )
    assert head.status_code == 206 and head_bytes == coded_bytes[:20]
    assert head.headers["content-range"] == f"bytes 0-19/{len(coded_bytes)}"


async def test_ranges_from_memory(client: httpx.AsyncClient) -> None:
    await _ranges(client, await _publish(client))


async def test_ranges_streamed_from_the_stored_chunks(
    client: httpx.AsyncClient, settings: Any
) -> None:
    analyst = await _publish(client)
    configure_memory(0)  # nothing held: every body is read from rendered_chunks
    try:
        await _ranges(client, analyst)
        whole = (await client.get(URL, headers=analyst)).json()
        ndjson = await client.get(f"{URL}?format=ndjson", headers=analyst)
        lines = [json.loads(line) for line in ndjson.content.splitlines()]
        assert {**lines[0], "clusters": lines[1:]} == whole
    finally:
        configure_memory(settings.render_cache_bytes)


async def test_streams_cross_chunk_boundaries(
    client: httpx.AsyncClient, session: AsyncSession
) -> None:
    """A document cut into 64-byte chunks, read back by every kind of range."""
    await _publish(client, releases=2)
    expected, _ = await _rendered_now(session, 2)
    model = await session.scalar(select(Release).where(Release.release_no == 2))
    assert model is not None
    rendered = render_document(json.loads(expected), chunk_bytes=64)
    assert len(rendered.chunks) > 3 and {len(c) for c in rendered.chunks[:-1]} == {64}
    meta = await insert_document(session, model.id, "test.json", rendered, 64)
    await session.commit()
    assert meta is not None
    identity, coded = gunzip(rendered.gzip), rendered.gzip
    db = client.app.state.runtime.db  # type: ignore[attr-defined]

    async def read(gzip_coded: bool, start: int, end: int) -> bytes:
        return b"".join([p async for p in stream_document(db, meta, gzip_coded, start, end)])

    for start, end in (
        (0, len(identity) - 1),
        (0, 0),
        (63, 64),
        (100, 300),
        (len(identity) - 5, len(identity) - 1),
    ):
        assert await read(False, start, end) == identity[start : end + 1], (start, end)
    for start, end in ((0, len(coded) - 1), (63, 64), (64, 127), (10, len(coded) - 2)):
        assert await read(True, start, end) == coded[start : end + 1], (start, end)


async def test_release_stored_before_renderings_is_rendered_on_first_read(
    client: httpx.AsyncClient, database_url: str
) -> None:
    analyst = await _publish(client)
    before = await client.get(URL, headers={**analyst, **IDENTITY})
    with psycopg.connect(libpq_url(database_url), autocommit=True) as conn:
        conn.execute("DELETE FROM rendered_documents")
    clear_render_cache()
    after = await client.get(URL, headers={**analyst, **IDENTITY})
    assert after.status_code == 200
    assert after.content == before.content and after.headers["etag"] == before.headers["etag"]
    with psycopg.connect(libpq_url(database_url)) as conn:
        keys = conn.execute("SELECT key FROM rendered_documents ORDER BY key").fetchall()
    assert keys == [("release.json",), ("release.ndjson",)]


async def test_revoked_key_reads_nothing(client: httpx.AsyncClient) -> None:
    await _publish(client)
    response = await client.post("/v1/keys", json={"role": "analyst"}, headers=ADMIN)
    key = response.json()
    analyst = {"Authorization": f"Bearer {key['key']}"}
    assert (await client.get(URL, headers=analyst)).status_code == 200
    assert (await client.delete(f"/v1/keys/{key['id']}", headers=ADMIN)).status_code == 204
    assert (await client.get(URL, headers=analyst)).status_code == 401


async def test_risk_summary_is_stored_per_number_of_releases(
    client: httpx.AsyncClient, database_url: str
) -> None:
    await _publish(client)
    auditor = await create_key(client, "auditor")
    url = "/v1/series/prison-health/releases/1/risk"
    first = await client.get(url, headers=auditor)
    assert first.status_code == 200
    assert first.headers["cache-control"] == "private, no-cache"
    assert (
        first.json()
        == (await client.get("/v1/series/prison-health/risk", headers=auditor)).json()[0]
    )
    again = await client.get(url, headers={**auditor, "If-None-Match": first.headers["etag"]})
    assert again.status_code == 304
    head = await client.head(url, headers=auditor)
    assert head.status_code == 200 and head.headers["etag"] == first.headers["etag"]
    publisher = await create_key(client, "publisher", "prison-health")
    await client.post(
        "/v1/series/prison-health/releases?wait=true", json=body(2), headers=publisher
    )
    later = await client.get(url, headers=auditor)
    assert (
        later.json()
        == (await client.get("/v1/series/prison-health/risk", headers=auditor)).json()[0]
    )
    other = await client.get(f"{url}?r_th=3", headers=auditor)
    assert other.json()["r_th"] == 3.0
    with psycopg.connect(libpq_url(database_url)) as conn:
        keys = [
            (n, k)
            for (n, k) in conn.execute(
                "SELECT r.release_no, d.key FROM rendered_documents d "
                "JOIN releases r ON r.id = d.release_id WHERE d.key LIKE 'risk/%' "
                "ORDER BY r.release_no, d.key"
            )
        ]
    # Each publication files its release's summary for the default r_th, for both audiences
    # (the API no longer assesses the series for it); the rest were asked for.
    assert keys == [
        (1, "risk/1/2.0/private"),
        (1, "risk/1/2.0/public"),
        (1, "risk/2/2.0/private"),
        (1, "risk/2/3.0/private"),
        (2, "risk/2/2.0/private"),
        (2, "risk/2/2.0/public"),
    ]
    analyst = await create_key(client, "analyst")
    assert (await client.get(url, headers={**analyst, "If-None-Match": "*"})).status_code == 403


async def test_the_wait_answer_reads_the_risk_its_job_filed(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The API used to load every release of the series and assess the new one for the
    # wait=true answer (9.2 GiB at 10,000,000 lines): now the job files it.
    from app.services import risk

    calls: list[int] = []
    real = risk.assess

    async def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return await real(*args, **kwargs)

    monkeypatch.setattr(risk, "assess", counted)
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    answers = []
    for release in (1, 2):
        posted = await client.post(
            "/v1/series/prison-health/releases?wait=true", json=body(release), headers=publisher
        )
        assert posted.status_code == 201, posted.text
        answers.append(posted.json())
    assert calls == []
    auditor = await create_key(client, "auditor")
    read = await client.get("/v1/series/prison-health/releases/2/risk", headers=auditor)
    assert calls == []
    # The same summary as the risk of the series, which assesses every release afresh; the
    # publisher's answer is the public one (published counterfeits, no suppression counts).
    fresh = (await client.get("/v1/series/prison-health/risk", headers=auditor)).json()[1]
    assert read.json() == fresh

    def risk_only(summary: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in summary.items() if k not in ("perturbation", "suppressed")}

    assert risk_only(answers[1]["risk"]) == risk_only(fresh)
    assert answers[1]["risk"]["perturbation"]["published_only"] is True
    assert answers[1]["release"]["n_rows"] == fresh["n_rows"]


async def test_render_command_fills_releases_stored_before_renderings(
    client: httpx.AsyncClient, database_url: str
) -> None:
    analyst = await _publish(client, releases=2)
    before = (await client.get(URL, headers={**analyst, **IDENTITY})).content
    with psycopg.connect(libpq_url(database_url), autocommit=True) as conn:
        conn.execute("DELETE FROM rendered_documents")
    clear_render_cache()
    lines: list[str] = []
    db = client.app.state.runtime.db  # type: ignore[attr-defined]
    assert await render_missing(db, lines.append) == 2
    assert lines == [
        "rendered prison-health release 1 (6 rows)",
        "rendered prison-health release 2 (8 rows)",
    ]
    assert await render_missing(db, lines.append) == 0
    with psycopg.connect(libpq_url(database_url)) as conn:
        (count,) = conn.execute("SELECT count(*) FROM rendered_documents").fetchone() or (0,)
    assert count == 4
    assert (await client.get(URL, headers={**analyst, **IDENTITY})).content == before

"""Large and encoded uploads over HTTP: memory bounded per row
whatever the body, caps on rows, terms per transaction and distinct terms, gzip bodies,
charsets."""

from __future__ import annotations

import gzip
import random
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from app.api.deps import get_runtime
from app.io.terms import bad_character, block_is_clean
from app.runtime import Runtime
from tests.api.conftest import create_key, create_series
from tests.api.test_bad_input import _stored

pytestmark = [pytest.mark.anyio, pytest.mark.db]

URL = "/v1/series/prison-health/releases"
PLAIN = {"Content-Type": "text/plain"}
#: The figure README and docs/performance.md give for the parse: memory per million rows
#: of ~5 terms (measured: 25 MiB of arrays, 46 MiB of server RSS at the peak).
MIB_PER_MILLION_ROWS = 64


def _with_settings(client: httpx.AsyncClient, **values: Any) -> None:
    """The app answers with these settings for the rest of the test (overrides are cleared
    by the ``client`` fixture)."""
    runtime: Runtime = client.app.state.runtime  # type: ignore[attr-defined]
    changed = Runtime(
        settings=runtime.settings.model_copy(update=values), db=runtime.db, secret=runtime.secret
    )
    client.app.dependency_overrides[get_runtime] = lambda: changed  # type: ignore[attr-defined]


def _lines(n: int, seed: int = 7) -> Iterator[bytes]:
    """``n`` FIMI lines of 1-9 terms over 3,000 items, like BMS-WebView-2."""
    rng = random.Random(seed)
    for _ in range(n):
        yield (
            " ".join(str(10_000 + rng.randrange(3_000)) for _ in range(rng.randint(1, 9))).encode()
            + b"\n"
        )


async def _stream(lines: Iterator[bytes], size: int = 1 << 16) -> AsyncIterator[bytes]:
    buffer, length = [], 0
    for line in lines:
        buffer.append(line)
        length += len(line)
        if length >= size:
            yield b"".join(buffer)
            buffer, length = [], 0
    if buffer:
        yield b"".join(buffer)


async def test_parse_memory_is_bounded_per_row(
    client: httpx.AsyncClient, database_url: str
) -> None:
    """50,000 lines, refused at the last one (the row cap) so that no job runs: the parse
    held every row before. It used to cost ~1.5 KB a row (frozensets of strings), 75 MB
    here; a fixed 4 MiB covers the dictionary, buffers and compiled patterns."""
    n = 50_000
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    _with_settings(client, max_body_bytes=1 << 30, max_transactions=n - 1)
    # The character classes are built once per process from the Unicode tables: not here.
    assert block_is_clean("a") and bad_character("a") is None
    tracemalloc.start()
    try:
        response = await client.post(
            URL, content=_stream(_lines(n)), headers={**publisher, **PLAIN}
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert response.status_code == 422, response.text
    assert response.json()["error"]["details"] == {"line": n, "limit": n - 1}
    assert peak < (4 + MIB_PER_MILLION_ROWS * n / 1e6) * 2**20, f"{peak / 2**20:.1f} MiB"
    assert await _stored(database_url) == (0, 0, 0)


async def test_an_endless_line_is_refused_early(client: httpx.AsyncClient) -> None:
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    _with_settings(client, max_body_bytes=1 << 30, max_terms_per_transaction=10)

    async def one_line() -> AsyncIterator[bytes]:
        for _ in range(10_000):  # 640 MB if it were read to the end
            yield b"x" * (1 << 16)

    response = await client.post(URL, content=one_line(), headers={**publisher, **PLAIN})
    assert response.status_code == 422, response.text
    assert response.json()["error"]["details"]["line"] == 1


@pytest.mark.parametrize(
    ("values", "body", "details"),
    [
        ({"max_terms_per_transaction": 3}, b"a b\nc d e f\n", {"line": 2, "limit": 3}),
        ({"max_distinct_terms": 4}, b"a b\nc d\na e\n", {"line": 3, "limit": 4}),
        ({"max_transactions": 2}, b"a\nb\nc\n", {"line": 3, "limit": 2}),
        ({"max_terms_per_release": 5}, b"a b\nc d\na e\n", {"line": 3, "limit": 5}),
    ],
    ids=["terms per transaction", "distinct terms", "transactions", "terms per release"],
)
async def test_caps_name_the_line(
    client: httpx.AsyncClient,
    database_url: str,
    values: dict[str, int],
    body: bytes,
    details: dict[str, int],
) -> None:
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    _with_settings(client, **values)
    response = await client.post(URL, content=body, headers={**publisher, **PLAIN})
    assert response.status_code == 422, response.text
    assert details.items() <= response.json()["error"]["details"].items()
    assert await _stored(database_url) == (0, 0, 0)


async def test_default_cap_on_terms_per_transaction(client: httpx.AsyncClient) -> None:
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    line = " ".join(f"t{i}" for i in range(1_001)).encode()
    response = await client.post(
        URL, content=b"a b\n" + line + b"\n", headers={**publisher, **PLAIN}
    )
    assert response.status_code == 422
    assert response.json()["error"]["details"] == {"line": 2, "field": "terms", "limit": 1000}


async def test_gzip_body_is_decoded(client: httpx.AsyncClient) -> None:
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    body = b"theft arson HIV\ntheft arson\nvandal arson cancer\nabuse arson\n"
    plain = await client.post(
        f"{URL}?dry_run=true&wait=true", content=body, headers={**publisher, **PLAIN}
    )
    zipped = await client.post(
        f"{URL}?dry_run=true&wait=true",
        content=gzip.compress(body),
        headers={**publisher, **PLAIN, "Content-Encoding": "gzip"},
    )
    assert plain.status_code == zipped.status_code == 200, zipped.text
    assert zipped.json()["release"] == plain.json()["release"]
    json_body = b'{"transactions": [{"terms": ["a", "HIV"]}, {"terms": ["a"]}]}'
    as_json = await client.post(
        f"{URL}?dry_run=true&wait=true",
        content=gzip.compress(json_body),
        headers={**publisher, "Content-Type": "application/json", "Content-Encoding": "gzip"},
    )
    assert as_json.status_code == 200, as_json.text


@pytest.mark.parametrize(
    ("headers", "content", "status", "code"),
    [
        ({"Content-Encoding": "gzip"}, b"not gzip at all", 400, "invalid_encoding"),
        ({"Content-Encoding": "gzip"}, gzip.compress(b"a b\n" * 100_000), 413, "payload_too_large"),
        ({"Content-Encoding": "br"}, b"a b\n", 415, "unsupported_content_encoding"),
        ({"Content-Type": "text/plain; charset=latin-1"}, b"caf\xe9\n", 415, "unsupported_charset"),
        ({"Content-Type": "application/json; charset=utf-16"}, b"{}", 415, "unsupported_charset"),
    ],
    ids=["bad gzip", "gzip bomb", "brotli", "latin-1", "utf-16"],
)
async def test_encodings_and_charsets_refused(
    client: httpx.AsyncClient,
    database_url: str,
    headers: dict[str, str],
    content: bytes,
    status: int,
    code: str,
) -> None:
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    response = await client.post(URL, content=content, headers={**publisher, **PLAIN, **headers})
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code
    assert await _stored(database_url) == (0, 0, 0)


async def test_utf8_charset_is_accepted(client: httpx.AsyncClient) -> None:
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    response = await client.post(
        f"{URL}?dry_run=true&wait=true",
        content="café HIV\ncafé\nthé\n".encode(),
        headers={**publisher, "Content-Type": "text/plain; charset=UTF-8"},
    )
    assert response.status_code == 200, response.text


async def test_json_has_its_own_limit(client: httpx.AsyncClient, database_url: str) -> None:
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    _with_settings(client, max_json_bytes=1_000)
    body = b'{"transactions": [' + b",".join([b'{"terms": ["a", "b"]}'] * 100) + b"]}"
    response = await client.post(
        URL, content=body, headers={**publisher, "Content-Type": "application/json"}
    )
    assert response.status_code == 413
    assert response.json()["error"]["details"] == {"limit": 1_000}
    assert await _stored(database_url) == (0, 0, 0)

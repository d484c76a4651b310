"""Parsing uploads (no database): streamed lines, CSV, JSON; faults named by line or item."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from app.errors import BadRequest, PayloadTooLarge, Unprocessable, UnsupportedMediaType
from app.services.identity import individual_key
from app.services.ingest import read_corpus

pytestmark = pytest.mark.anyio


async def _stream(data: bytes, size: int = 3) -> AsyncIterator[bytes]:
    for i in range(0, len(data), size):
        yield data[i : i + size]


async def _read(content_type: str, data: bytes, **kwargs: object):  # type: ignore[no-untyped-def]
    return await read_corpus(content_type, _stream(data), limit=10_000, **kwargs)  # type: ignore[arg-type]


async def test_plain_lines_split_across_chunks() -> None:
    corpus = await _read("text/plain", "\ufeffa b\r\nc  d\te\nnaïve f".encode())
    assert [sorted(t.terms) for t in corpus.compact.transactions()] == [
        ["a", "b"],
        ["c", "d", "e"],
        ["f", "naïve"],
    ]


async def test_plain_faults_name_their_line() -> None:
    with pytest.raises(Unprocessable) as blank:
        await _read("text/plain", b"a\n \nb\n")
    assert blank.value.details == {"line": 2, "field": "terms"}
    with pytest.raises(BadRequest) as encoding:
        await _read("text/plain", b"a\nb\nc\xe9\n")
    assert encoding.value.details == {"line": 3, "column": 2}


async def test_csv_columns() -> None:
    corpus = await _read("text/csv", b'cluster,terms,individual\ng1,"a; b",p1\ng1,c,\n')
    assert [(sorted(t.terms), t.individual, t.cluster) for t in corpus.compact.transactions()] == [
        (["a", "b"], individual_key(b"", "p1"), "g1"),
        (["c"], None, "g1"),
    ]
    with pytest.raises(BadRequest):
        await _read("text/csv", b"terms,terms\na,b\n")
    with pytest.raises(BadRequest) as fields:
        await _read("text/csv", b"terms\na,b\n")
    assert fields.value.details == {"line": 2}


async def test_json_body_and_hash() -> None:
    one = await _read("application/json", b'{"label": "x", "transactions": [{"terms": ["a"]}]}')
    two = await _read(
        "application/json; charset=utf-8", b'{"label": "x", "transactions": [{"terms": ["a"]}]}'
    )
    assert one.body_hash == two.body_hash and one.label == "x" and len(one) == 1
    other = await _read("application/json", b'{"label": "y", "transactions": [{"terms": ["a"]}]}')
    assert other.body_hash != one.body_hash


async def test_query_label_changes_the_hash() -> None:
    a = await _read("text/plain", b"a b\n", label="2024")
    b = await _read("text/plain", b"a b\n", label="2025")
    assert a.body_hash != b.body_hash


async def test_limit_and_media_type() -> None:
    with pytest.raises(PayloadTooLarge):
        await read_corpus("text/plain", _stream(b"a b\n" * 100, 50), limit=100)
    with pytest.raises(UnsupportedMediaType):
        await _read("application/x-www-form-urlencoded", b"a=b")
    with pytest.raises(UnsupportedMediaType):
        await _read("", b"a b")


async def test_wong_needs_individuals() -> None:
    with pytest.raises(Unprocessable) as missing:
        await _read("text/plain", b"a b\n", require_individual=True)
    assert missing.value.details == {"line": 1, "field": "individual"}

"""HTTP details of stored documents, without a server: codings, validators, ranges."""

from __future__ import annotations

import pytest

from app.api.representation import accepts_gzip, etag_matches, parse_range


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("gzip", True),
        ("GZIP", True),
        ("deflate, gzip;q=0.1", True),
        ("x-gzip", True),
        ("*", True),
        ("*;q=0.5, br", True),
        ("gzip;q=0, *", False),
        ("gzip; q=0.0", False),
        ("*;q=0", False),
        ("identity", False),
        ("br, zstd", False),
        ("", False),
        (None, False),
        ("gzip;q=bad", False),
    ],
)
def test_accepts_gzip(header: str | None, expected: bool) -> None:
    assert accepts_gzip(header) is expected


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ('"abc"', True),
        ('W/"abc"', True),
        ('"abc-gzip"', True),
        ('"x", "abc"', True),
        ("*", True),
        ('"abcd"', False),
        ('"ab"', False),
        ("", False),
        (None, False),
    ],
)
def test_etag_matches(header: str | None, expected: bool) -> None:
    assert etag_matches(header, "abc") is expected


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("bytes=0-9", (0, 9)),
        ("bytes=5-", (5, 99)),
        ("bytes=-10", (90, 99)),
        ("bytes=-500", (0, 99)),
        ("bytes=90-200", (90, 99)),
        ("bytes=99-99", (99, 99)),
        ("bytes=0-1,4-5", None),
        ("items=0-5", None),
        ("bytes=9-3", None),
        ("bytes=a-b", None),
        ("bytes=", None),
        ("bytes=5", None),
    ],
)
def test_parse_range(header: str, expected: tuple[int, int] | None) -> None:
    assert parse_range(header, 100) == expected


@pytest.mark.parametrize("header", ["bytes=100-", "bytes=150-200", "bytes=-0"])
def test_unsatisfiable_ranges(header: str) -> None:
    with pytest.raises(ValueError):
        parse_range(header, 100)

"""Rendering a release once into bytes: equal to its document, chunked, validated."""

from __future__ import annotations

import hashlib
import json

import pytest

from app.core.model import release_from_counts
from app.io.public import release_document, release_header
from app.io.rendering import gunzip, render_document, render_release


def _release():  # type: ignore[no-untyped-def]
    release = release_from_counts(
        3,
        [
            (
                [("arson", "theft"), ("arson", "fraud", "theft")],
                {"cancer": 1, "HIV": 1},
                {"herpes": 0},
                1,
            ),
            ([("abuse", "ü-term")], {"HIV": 0}, {}, 0),
        ],
        {"herpes": 1},
        {"cancer": 0.3333, "HIV": 0.1667},
    )
    release.label = "2025"
    return release


@pytest.mark.parametrize("chunk_bytes", [16, 1 << 20])
def test_json_and_ndjson_are_the_public_document(chunk_bytes: int) -> None:
    release = _release()
    params = {"seed": 7, "r_th": 2.0}
    header = release_header(release, "prison-health", "sanony", params)
    as_json, as_ndjson = render_release(header, release.clusters, chunk_bytes=chunk_bytes)
    identity = gunzip(as_json.gzip)
    assert json.loads(identity) == json.loads(
        json.dumps(release_document(release, "prison-health", "sanony", params))
    )
    # Nested mappings sorted, top-level order kept: the same bytes whatever order the
    # dictionaries were built in (JSONB reorders them).
    assert identity.startswith(b'{"series":"prison-health","release_no":3,"label":"2025"')
    assert b'"private_terms":{"HIV":1,"cancer":1}' in identity
    assert "ü-term" in identity.decode()
    assert as_json.identity_size == len(identity)
    assert as_json.etag == hashlib.sha256(identity).hexdigest()[:32]
    assert all(len(c) == chunk_bytes for c in as_json.chunks[:-1])
    lines = [json.loads(line) for line in gunzip(as_ndjson.gzip).splitlines()]
    assert {**lines[0], "clusters": lines[1:]} == json.loads(identity)
    assert as_json.media_type == "application/json"
    assert as_ndjson.media_type == "application/x-ndjson" and as_ndjson.etag != as_json.etag


def test_same_release_same_bytes_whatever_the_dict_order() -> None:
    first, second = _release(), _release()
    second.population_rates = dict(reversed(list(second.population_rates.items())))
    second.clusters[0].private_counts = {"HIV": 1, "cancer": 1}
    render = [
        render_release(release_header(r, "s", "sanony", {"b": 1, "a": 2}), r.clusters)[0]
        for r in (first, second)
    ]
    assert render[0].etag == render[1].etag and render[0].gzip == render[1].gzip


def test_small_document() -> None:
    rendered = render_document({"r_th": 2.0, "by_term": {"HIV": 0.5}})
    assert gunzip(rendered.gzip) == b'{"r_th":2.0,"by_term":{"HIV":0.5}}'
    assert len(rendered.chunks) == 1 and rendered.gzip_size == len(rendered.gzip)

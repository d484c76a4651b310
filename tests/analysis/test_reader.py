"""Loading releases: a file, a directory, the API (a mocked transport), and the tables."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from app.analysis.reader import (
    UnsupportedRelease,
    global_bag_table,
    load_release,
    load_series,
    parse_release,
    private_table,
    rows_table,
)
from tests.analysis.sample import release_doc


def _write_series(directory: Path, n: int = 3) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for no in range(1, n + 1):
        (directory / f"release-{no:03d}.json").write_text(json.dumps(release_doc(no)))
    (directory / "risk.json").write_text("[]")  # not a release: ignored


def test_a_file_reads_as_one_release(tmp_path: Path) -> None:
    path = tmp_path / "release-001.json"
    path.write_text(json.dumps(release_doc()))
    release = load_release(path)
    assert release.release_no == 1 and release.label == "y1" and release.n_rows == 6
    assert release.clusters[0].rows[0] == ("a", "b")
    assert release.clusters[0].n_s("HIV") == 3 and release.clusters[1].n_s("HIV") == 1
    assert release.published_copies("HIV") == 5
    assert release.private_copies() == 6
    assert release.counterfeit_rows_total is None
    assert [r.release_no for r in load_series(path)] == [1]


def test_a_directory_reads_in_order_with_the_earlier_copies(tmp_path: Path) -> None:
    _write_series(tmp_path / "out", 3)
    releases = load_series(tmp_path / "out")
    assert [r.release_no for r in releases] == [1, 2, 3]
    assert [r.earlier_private_copies for r in releases] == [0, 6, 12]


def test_an_empty_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_series(tmp_path)


def test_a_release_level_counterfeit_total_is_read() -> None:
    release = parse_release(release_doc(counterfeit_rows=4))
    assert release.counterfeit_rows_total == 4


def test_the_guarantee_is_read_and_paper_when_absent() -> None:
    assert parse_release(release_doc()).guarantee == "paper"
    assert parse_release(release_doc(guarantee=None)).guarantee == "paper"
    assert parse_release(release_doc(guarantee="true_rows")).guarantee == "true_rows"
    assert "guarantee" not in parse_release(release_doc(guarantee="true_rows")).extra
    with pytest.raises(UnsupportedRelease, match="guarantee is 'exact'.*'paper', 'true_rows'"):
        parse_release(release_doc(guarantee="exact"))


def test_the_records_are_the_rows_less_the_counterfeit_rows() -> None:
    assert parse_release(release_doc(counterfeit_rows=1)).records == 5
    # without the release's total, the clusters' counterfeits (a floor): at most 5 records
    assert parse_release(release_doc()).counterfeit_rows == 1


def test_the_bag_s_copies_no_share_places() -> None:
    release = parse_release(release_doc())  # HIV: bag 2, c1's share 1
    assert release.unplaced_copies("HIV") == 1 and release.unplaced_copies("flu") == 0


def test_disassociation_chunks_are_refused_with_a_clear_error() -> None:
    doc = {
        "series": "d",
        "release_no": 1,
        "method": "disassociation",
        "clusters": [{"size": 3, "record_chunks": [], "term_chunk": []}],
    }
    with pytest.raises(UnsupportedRelease, match="chunks, not rows"):
        parse_release(doc)


def test_the_tables() -> None:
    releases = [parse_release(release_doc(1)), parse_release(release_doc(2))]
    rows = rows_table(releases)
    assert len(rows) == 12
    assert list(rows.columns) == ["release_no", "cluster_id", "row", "terms"]
    assert rows.iloc[0]["terms"] == ("a", "b")
    private = private_table(releases)
    hiv = private[(private.release_no == 1) & (private.term == "HIV")]
    assert hiv.set_index("cluster_id")["n_s"].to_dict() == {"c1": 3, "c2": 1}
    bag = global_bag_table(releases)
    assert bag.to_dict("records")[0] == {"release_no": 1, "term": "HIV", "copies": 2, "shared": 1}


def _mock_api(requests: list[httpx.Request]) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        if request.headers.get("authorization") != "Bearer k1":
            return httpx.Response(401, json={"detail": "no key"})
        path = request.url.path
        if path == "/v1/series/toy/releases":
            return httpx.Response(200, json=[{"release_no": 2}, {"release_no": 1}])
        if path.startswith("/v1/series/toy/releases/"):
            return httpx.Response(200, json=release_doc(int(path.rsplit("/", 1)[1])))
        return httpx.Response(404, json={"detail": "no"})

    return httpx.MockTransport(handler)


def test_the_api_is_read_with_the_key() -> None:
    seen: list[httpx.Request] = []
    releases = load_series("http://api.test", series="toy", key="k1", transport=_mock_api(seen))
    assert [r.release_no for r in releases] == [1, 2]
    assert [r.url.path for r in seen] == [
        "/v1/series/toy/releases",
        "/v1/series/toy/releases/1",
        "/v1/series/toy/releases/2",
    ]
    assert releases[1].earlier_private_copies == 6


def test_a_series_url_and_a_release_url() -> None:
    seen: list[httpx.Request] = []
    transport = _mock_api(seen)
    assert len(load_series("http://api.test/v1/series/toy", key="k1", transport=transport)) == 2
    one = load_series("http://api.test/v1/series/toy/releases/2", key="k1", transport=transport)
    assert [r.release_no for r in one] == [2]
    assert one[0].earlier_private_copies is None  # release 1 not read


def test_a_wrong_key_raises() -> None:
    with pytest.raises(httpx.HTTPStatusError):
        load_series("http://api.test", series="toy", key="nope", transport=_mock_api([]))

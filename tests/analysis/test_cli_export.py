"""``serialpub export``: baskets and supports from publish-local's output."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from click.testing import Result
from typer.testing import CliRunner

from app.analysis.reader import load_series
from app.cli import cli
from tests.analysis.sample import release_doc

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = [ROOT / "examples" / f"prison-{year}.dat" for year in (2022, 2023, 2024)]
PRIVATE = {"HIV", "cancer", "herpes"}


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export") / "releases"
    result = CliRunner().invoke(
        cli,
        [
            "publish-local",
            *map(str, EXAMPLES),
            "--private",
            ",".join(sorted(PRIVATE)),
            "--params",
            json.dumps({"r_th": 8, "cluster_size": 4, "seed": 3, "horizon": 3}),
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    return out


def _multi_word(directory: Path) -> Path:
    """A release whose terms hold spaces; c2's first row holds no term at all."""
    doc = release_doc()
    doc["clusters"][0]["rows"] = [["whole milk", "bread"], ["bread"], ["whole milk"], ["bread"]]
    doc["clusters"][0]["private_terms"] = {"type 2 diabetes": 2}
    doc["clusters"][0]["global_share"] = {}
    doc["clusters"][1]["rows"] = [[], ["whole milk"]]
    doc["clusters"][1]["private_terms"] = {}
    doc["population_rates"] = {"type 2 diabetes": 1 / 3}
    doc["global_bag"] = {}
    path = directory / "release-001.json"
    path.write_text(json.dumps(doc))
    return path


def _export(*args: str) -> Result:
    result = CliRunner().invoke(cli, ["export", *args])
    assert result.exit_code == 0, result.output
    return result


def test_baskets_csv_keep_every_row_and_every_term(tmp_path: Path) -> None:
    release = load_series(_multi_word(tmp_path))[0]
    result = _export(str(tmp_path), "--format", "baskets-csv", "--seed", "2")
    lines = list(csv.DictReader(io.StringIO(result.stdout)))
    assert len(lines) == release.n_rows == 6
    baskets = [json.loads(line["items"]) for line in lines]
    rows = [list(row) for cluster in release.clusters for row in cluster.rows]
    assert [[t for t in b if t != "type 2 diabetes"] for b in baskets] == rows
    assert rows[0] == ["bread", "whole milk"] and rows[4] == []
    assert sum("type 2 diabetes" in b for b in baskets) == 2
    assert [line["cluster_id"] for line in lines] == ["c1"] * 4 + ["c2"] * 2
    # pandas reads it back as well
    frame = pd.read_csv(io.StringIO(result.stdout))
    assert frame["items"].map(json.loads).map(len).tolist() == [len(b) for b in baskets]


def test_baskets_jsonl(tmp_path: Path) -> None:
    _multi_word(tmp_path)
    result = _export(str(tmp_path), "--format", "baskets-jsonl", "--seed", "2")
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(lines) == 6 and lines[0]["release_no"] == 1
    assert "whole milk" in lines[0]["items"]
    csv_lines = _export(str(tmp_path), "--format", "baskets-csv", "--seed", "2").stdout
    assert [line["items"] for line in lines] == [
        json.loads(r["items"]) for r in csv.DictReader(io.StringIO(csv_lines))
    ]


def test_baskets_fimi_need_their_dictionary(tmp_path: Path) -> None:
    release = load_series(_multi_word(tmp_path))[0]
    missing = CliRunner().invoke(cli, ["export", str(tmp_path), "--format", "baskets-fimi"])
    assert missing.exit_code == 2 and "--dictionary" in missing.output
    items = tmp_path / "items.csv"
    out = tmp_path / "b.dat"
    result = CliRunner().invoke(
        cli,
        ["export", str(tmp_path), "--format", "baskets-fimi", "--seed", "2"]
        + ["--dictionary", str(items), "--out", str(out)],
    )
    assert result.exit_code == 0, result.output
    # 6 rows, 1 of them counterfeit (c1's count, the release publishes no total): 5 records
    assert "1 of 6 rows hold no term" in result.output and "records (5)" in result.output
    names = {int(r["item"]): r["term"] for r in csv.DictReader(items.open())}
    assert "whole milk" in names.values() and "type 2 diabetes" in names.values()
    lines = out.read_text().split("\n")[:-1]
    assert len(lines) == release.n_rows
    baskets = [sorted(names[int(i)] for i in line.split()) for line in lines]
    csv_lines = _export(str(tmp_path), "--format", "baskets-csv", "--seed", "2").stdout
    assert baskets == [
        sorted(json.loads(r["items"])) for r in csv.DictReader(io.StringIO(csv_lines))
    ]


def test_baskets_of_one_release(published: Path) -> None:
    args = ["export", str(published), "--format", "baskets-csv", "--seed", "5", "--release", "2"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    lines = list(csv.DictReader(io.StringIO(result.stdout)))
    release = load_series(published)[1]
    assert len(lines) == release.n_rows and {line["release_no"] for line in lines} == {"2"}
    held = Counter(t for line in lines for t in json.loads(line["items"]) if t in PRIVATE)
    assert held == Counter({s: release.published_copies(s) for s in PRIVATE})
    again = CliRunner().invoke(cli, args)
    assert again.stdout == result.stdout  # seeded


def test_supports_csv(published: Path) -> None:
    result = CliRunner().invoke(
        cli, ["export", str(published / "release-001.json"), "--min-support", "2"]
    )
    assert result.exit_code == 0, result.output
    table = list(csv.DictReader(io.StringIO(result.stdout)))
    items = [tuple(json.loads(r["items"])) for r in table]
    assert {i[0] for i, r in zip(items, table, strict=True) if r["kind"] == "private"} == PRIVATE
    assert all(float(r["low"]) <= float(r["expected"]) <= float(r["high"]) for r in table)
    assert all(len(i) == int(r["size"]) for i, r in zip(items, table, strict=True))
    assert any(r["kind"] == "public+private" for r in table)
    assert not any(r["kind"] == "public+public" for r in table)


def test_supports_keep_a_multi_word_term_whole(tmp_path: Path) -> None:
    _multi_word(tmp_path)
    result = _export(str(tmp_path), "--min-support", "1", "--pairs", "all")
    table = pd.read_csv(io.StringIO(result.stdout))
    items = set(table["items"].map(lambda cell: tuple(json.loads(cell))))
    assert ("type 2 diabetes",) in items and ("whole milk",) in items
    assert ("bread", "whole milk") in items  # a public pair: two terms, not three
    assert ("whole milk", "type 2 diabetes") in items
    lines = _export(str(tmp_path), "--format", "supports-jsonl", "--pairs", "all").stdout
    records = [json.loads(line) for line in lines.splitlines()]
    assert {tuple(r["items"]) for r in records} == items
    assert all(isinstance(r["counterfeits_complete"], bool) for r in records)


def test_bad_input_is_refused(published: Path, tmp_path: Path) -> None:
    bad = CliRunner().invoke(cli, ["export", str(published), "--format", "xml"])
    assert bad.exit_code == 2 and "baskets-csv" in bad.output
    fimi = CliRunner().invoke(cli, ["export", str(published), "--format", "baskets"])
    assert fimi.exit_code == 2 and "baskets-fimi" in fimi.output
    stray = CliRunner().invoke(cli, ["export", str(published), "--dictionary", "d.csv"])
    assert stray.exit_code == 2 and "only baskets-fimi" in stray.output
    empty = CliRunner().invoke(cli, ["export", str(tmp_path)])
    assert empty.exit_code == 2 and "no release-*.json" in empty.output
    chunks = tmp_path / "release-001.json"
    chunks.write_text(
        json.dumps({"release_no": 1, "method": "disassociation", "clusters": [{"size": 2}]})
    )
    refused = CliRunner().invoke(cli, ["export", str(chunks)])
    assert refused.exit_code == 2 and "chunks, not rows" in refused.output
    missing = CliRunner().invoke(cli, ["export", str(published), "--release", "9"])
    assert missing.exit_code == 2 and "no release 9" in missing.output

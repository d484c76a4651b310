"""``serialpub export``: baskets and supports from publish-local's output."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.analysis.reader import load_series
from app.cli import cli

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
            json.dumps({"r_th": 8, "cluster_size": 4, "seed": 3}),
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    return out


def test_baskets_of_one_release(published: Path, tmp_path: Path) -> None:
    target = tmp_path / "b.dat"
    args = ["export", str(published), "--format", "baskets", "--seed", "5", "--release", "2"]
    result = CliRunner().invoke(cli, [*args, "--out", str(target)])
    assert result.exit_code == 0, result.output
    lines = target.read_text().splitlines()
    release = load_series(published)[1]
    assert len(lines) == release.n_rows
    held = Counter(t for line in lines for t in line.split() if t in PRIVATE)
    assert held == Counter(
        {s: sum(c.n_s(s) for c in release.clusters) for s in PRIVATE if release.published_copies(s)}
    )
    again = CliRunner().invoke(cli, args)
    assert again.stdout.splitlines() == lines  # seeded


def test_supports_csv(published: Path) -> None:
    result = CliRunner().invoke(
        cli, ["export", str(published / "release-001.json"), "--min-support", "2"]
    )
    assert result.exit_code == 0, result.output
    table = list(csv.DictReader(io.StringIO(result.stdout)))
    assert {r["itemset"] for r in table if r["kind"] == "private"} == PRIVATE
    assert all(float(r["low"]) <= float(r["expected"]) <= float(r["high"]) for r in table)
    assert any(r["kind"] == "public+private" for r in table)
    assert not any(r["kind"] == "public+public" for r in table)


def test_bad_input_is_refused(published: Path, tmp_path: Path) -> None:
    bad = CliRunner().invoke(cli, ["export", str(published), "--format", "xml"])
    assert bad.exit_code == 2 and "baskets or supports" in bad.output
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

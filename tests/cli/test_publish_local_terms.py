"""``serialpub publish-local`` reads corpora and private terms as the service does: the same
reader, validation and folding, formats by extension or ``--format``, never guessed, and every
warning about terms printed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from typer.testing import CliRunner

from app.cli import cli

# min_copies 1 and no steady level: the terms read here enter the series with a copy or two
# (design.md §5.8).
PARAMS = json.dumps({"r_th": 2, "cluster_size": 2, "seed": 7, "min_copies": 1, "level_margin": 0})
FILLER = ["theft", "arson", "fraud", "vandal", "abuse", "murder"]


def _run(tmp_path: Path, *args: str) -> Result:
    return CliRunner().invoke(
        cli, ["publish-local", *args, "--params", PARAMS, "--out", str(tmp_path / "out")]
    )


def _said(result: Result) -> str:
    """The output as one line: the error box's borders and wrapping dropped."""
    return " ".join(re.sub("[\u2500-\u257f]", " ", result.output).split())


def _release(tmp_path: Path, number: int = 1) -> dict[str, Any]:
    path = tmp_path / "out" / f"release-{number:03d}.json"
    return dict(json.loads(path.read_text(encoding="utf-8")))


def _public_terms(release: dict[str, Any]) -> set[str]:
    return {term for cluster in release["clusters"] for row in cluster["rows"] for term in row}


def _lines(tmp_path: Path, name: str, lines: list[str]) -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _filler(n: int) -> list[str]:
    return [f"{FILLER[i % 6]} {FILLER[(i + 2) % 6]}" for i in range(n)]


def test_spellings_of_a_private_term_are_private_and_told(tmp_path: Path) -> None:
    """``hiv``, ``Hiv``, ``ＨＩＶ`` (and look-alikes) were printed in clear beside ``--private
    HIV``, with no warning."""
    spellings = ["hiv", "Hiv", "ＨＩＶ", "\u041dIV", "H\u0130V"]
    corpus = [f"{FILLER[i % 6]} {spellings[i % 5]}" for i in range(10)] + _filler(8)
    result = _run(tmp_path, str(_lines(tmp_path, "2024.dat", corpus)), "--private", "HIV")
    assert result.exit_code == 0, result.output
    assert _public_terms(_release(tmp_path)) <= set(FILLER)
    for spelling in spellings:
        assert f"warning: {spelling!r} is a spelling of the private term 'HIV'" in result.output
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert {w["term"] for w in report[0]["warnings"] if "private_term" in w} == set(spellings)


@pytest.mark.parametrize(
    ("spelling", "named"),
    [("HIV\u200b", "U+200B (ZERO WIDTH SPACE)"), ("HI\u034fV", "U+034F"), ("HIV\u2800", "U+2800")],
)
def test_invisible_spellings_are_refused_naming_the_line(
    tmp_path: Path, spelling: str, named: str
) -> None:
    corpus = _lines(tmp_path, "2024.dat", ["theft arson", f"fraud {spelling}", "theft"])
    result = _run(tmp_path, str(corpus), "--private", "HIV")
    assert result.exit_code == 2, result.output
    assert "line 2" in _said(result) and named in _said(result)
    assert not (tmp_path / "out" / "release-001.json").exists()


def test_a_csv_file_is_read_as_the_service_reads_csv(tmp_path: Path) -> None:
    """The service's own ``text/csv`` was read as FIMI: ``DUI;assault;HIV`` one term, the
    header a transaction, and a risk of 0 reported."""
    rows = ["DUI;assault;HIV", "theft;arson", "DUI;theft", "arson;HIV", *_filler(8)]
    corpus = _lines(tmp_path, "2024.csv", ["terms", *(r.replace(" ", ";") for r in rows)])
    result = _run(tmp_path, str(corpus), "--private", "HIV")
    assert result.exit_code == 0, result.output
    release = _release(tmp_path)
    assert _public_terms(release) == {"DUI", "assault", *FILLER}
    assert release["population_rates"]["HIV"] > 0


def test_the_format_is_never_guessed(tmp_path: Path) -> None:
    corpus = _lines(tmp_path, "2024.txt", ["theft HIV", *_filler(6)])
    refused = _run(tmp_path, str(corpus), "--private", "HIV")
    assert refused.exit_code == 2, refused.output
    assert "name it with --format" in _said(refused) and "'.txt'" in _said(refused)
    named = _run(tmp_path, str(corpus), "--private", "HIV", "--format", "fimi")
    assert named.exit_code == 0, named.output
    assert _public_terms(_release(tmp_path)) == set(FILLER)


def test_private_file_holds_one_term_a_line(tmp_path: Path) -> None:
    """``hepatitis C`` made ``hepatitis`` and ``C`` private and was printed in clear."""
    private = tmp_path / "private.txt"
    private.write_text("HIV\r\n\n  hepatitis C \n", encoding="utf-8")
    rows = ["hepatitis C;theft", "hepatitis;arson", "C;fraud", "HIV;theft"]
    rows += [r.replace(" ", ";") for r in _filler(8)]
    corpus = _lines(tmp_path, "2024.csv", ["terms", *rows])
    result = _run(tmp_path, str(corpus), "--private-file", str(private))
    assert result.exit_code == 0, result.output
    release = _release(tmp_path)
    assert _public_terms(release) == {"hepatitis", "C", *FILLER}
    assert set(release["population_rates"]) == {"HIV", "hepatitis C"}
    private.write_text("HIV\n\nhe\u200bpatitis\n", encoding="utf-8")
    refused = _run(tmp_path, str(corpus), "--private-file", str(private), "--replace")
    assert refused.exit_code == 2, refused.output
    assert "line 3" in _said(refused) and "U+200B" in _said(refused)


def test_exact_match_tells_of_the_spellings_it_publishes(tmp_path: Path) -> None:
    corpus = [f"{FILLER[i % 6]} {('hiv', 'HIV')[i % 2]}" for i in range(10)] + _filler(8)
    path = str(_lines(tmp_path, "2024.dat", corpus))
    result = _run(tmp_path, path, "--private", "HIV", "--private-match", "exact")
    assert result.exit_code == 0, result.output
    assert "hiv" in _public_terms(_release(tmp_path))
    assert "'hiv' is a spelling of the private term 'HIV'" in result.output
    assert "published in clear" in result.output


def test_a_misspelt_private_term_names_the_published_one(tmp_path: Path) -> None:
    corpus = [f"{FILLER[i % 6]} cancer" for i in range(4)] + _filler(8)
    path = str(_lines(tmp_path, "2024.dat", corpus))
    result = _run(tmp_path, path, "--private", "canser")
    assert result.exit_code == 0, result.output
    assert "the private term 'canser' occurs in no transaction" in result.output
    assert "nearest published term is 'cancer'" in result.output


def test_json_files_are_the_service_body_or_its_list(tmp_path: Path) -> None:
    """A JSON file's own private terms are private from its release on, as a post's are."""
    items = [{"terms": r.split(), "individual": f"p{i}"} for i, r in enumerate(_filler(10))]
    first = tmp_path / "2023.json"
    first.write_text(json.dumps(items + [{"terms": ["mansl", "theft"]}] * 2), encoding="utf-8")
    body = {"label": "y24", "private_terms": ["mansl"], "transactions": items}
    body["transactions"] = [*items, {"terms": ["mansl", "arson"]}, {"terms": ["HIV", "fraud"]}]
    second = tmp_path / "2024.json"
    second.write_text(json.dumps(body), encoding="utf-8")
    result = _run(tmp_path, str(first), str(second), "--private", "HIV")
    assert result.exit_code == 0, result.output
    assert "mansl" in _public_terms(_release(tmp_path, 1))
    later = _release(tmp_path, 2)
    assert later["label"] == "y24"
    assert _public_terms(later) <= set(FILLER)
    assert "'mansl' is private from this release on" in result.output

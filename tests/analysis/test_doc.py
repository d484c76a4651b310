"""docs/analysis.md runs: its ``serialpub`` commands and Python blocks, in order, up to the
marker that ends the tested part (the optional BMS-WebView-1 section needs a large corpus)."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import cli

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "analysis.md"
MARKER = "<!-- end of the tested part"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def blocks() -> list[tuple[str, str]]:
    text = DOC.read_text(encoding="utf-8")
    assert MARKER in text
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(text.split(MARKER)[0])]


def commands(script: str) -> list[list[str]]:
    """The ``serialpub`` commands of a shell block (continuation lines joined); the rest
    (creating the venv, installing) is the reader's setup."""
    joined = script.replace("\\\n", " ")
    return [shlex.split(line)[1:] for line in joined.splitlines() if line.startswith("serialpub ")]


def test_the_doc_runs_word_for_word(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "docs_analysis"}
    ran = {"sh": 0, "python": 0}
    for language, body in blocks():
        if language == "sh":
            for args in commands(body):
                result = CliRunner().invoke(cli, args)
                assert result.exit_code == 0, (args, result.output)
                ran["sh"] += 1
        elif language == "python":
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(body, str(DOC), "exec"), namespace)  # noqa: S102 - the doc's code
            ran["python"] += 1
    assert ran == {"sh": 4, "python": 4}
    assert (tmp_path / "baskets-2022.csv").read_text().count("\n") == 41  # a header, 40 rows
    assert (tmp_path / "baskets-2022.dat").read_text().count("\n") == 40
    assert (tmp_path / "items-2022.csv").read_text().startswith("item,term\n")
    assert "herpes" in (tmp_path / "supports.csv").read_text()

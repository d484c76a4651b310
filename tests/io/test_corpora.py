"""Corpora are found through one setting, ``SERIALPUB_CORPORA_DIR``, read in one module."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.io import corpora
from app.io.corpora import BMS_WEBVIEW_1, corpora_dir, corpus_file, find_corpus, missing

_ROOT = Path(__file__).resolve().parents[2]


def test_the_default_is_shared_data_beside_the_repository(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(corpora.ENV_VAR, raising=False)
    assert corpora_dir() == (_ROOT.parent / "shared" / "data").resolve()
    monkeypatch.setenv(corpora.ENV_VAR, "  ")
    assert corpora_dir() == (_ROOT.parent / "shared" / "data").resolve()


def test_the_setting_wins_and_a_relative_one_is_taken_from_the_root(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(corpora.ENV_VAR, str(tmp_path))
    assert corpora_dir() == tmp_path.resolve()
    assert find_corpus(BMS_WEBVIEW_1) is None
    (tmp_path / BMS_WEBVIEW_1).write_text("1 2 3\n", encoding="utf-8")
    assert find_corpus(BMS_WEBVIEW_1) == corpus_file(BMS_WEBVIEW_1)
    monkeypatch.setenv(corpora.ENV_VAR, "benchmarks")
    assert corpora_dir() == (_ROOT / "benchmarks").resolve()


def test_a_missing_corpus_names_where_it_was_looked_for_and_the_setting(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(corpora.ENV_VAR, str(tmp_path))
    reason = missing(BMS_WEBVIEW_1)
    assert str(tmp_path / BMS_WEBVIEW_1) in reason and corpora.ENV_VAR in reason


#: A machine path to the corpora or to the shared folder beside the checkout (the auditors'
#: tools have their own setting, ``benchmarks/auditor.py``), or another way of configuring
#: them. ``SHARED / "data"`` in a benchmark slipped past the first version of this pattern.
_OWN_PATH = re.compile(
    r"shared/data|\"shared\"\s*/|/\s*\"data\"|SERIALPUB_(BENCH_DATA|CORPUS_DIR)\b"
    r"|environ[^\n]*SERIALPUB_CORPORA_DIR"
)


def test_nothing_but_the_helper_finds_corpora_its_own_way() -> None:
    helper = _ROOT / "app" / "io" / "corpora.py"
    offenders = [
        f"{path.relative_to(_ROOT)}:{number}: {line.strip()}"
        for folder in ("app", "tests", "benchmarks")
        for path in sorted((_ROOT / folder).rglob("*.py"))
        if path not in (helper, Path(__file__))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _OWN_PATH.search(line)
    ]
    assert offenders == [], "use app.io.corpora:\n" + "\n".join(offenders)

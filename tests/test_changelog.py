"""CHANGELOG.md names versions in the manner of Keep a Changelog, newest first, and its newest
entry is the version the package reports."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

from app.version import serialpub_version

CHANGELOG = Path(__file__).resolve().parents[1] / "CHANGELOG.md"
_ENTRY = re.compile(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d\d-\d\d)$", re.MULTILINE)


def entries(text: str) -> list[tuple[tuple[int, ...], date]]:
    return [
        (tuple(int(part) for part in number.split(".")), date.fromisoformat(day))
        for number, day in _ENTRY.findall(text)
    ]


def test_the_newest_entry_is_the_package_version() -> None:
    found = entries(CHANGELOG.read_text(encoding="utf-8"))
    assert found, "CHANGELOG.md has no '## [X.Y.Z] - YYYY-MM-DD' entry"
    newest = ".".join(str(part) for part in found[0][0])
    assert newest == serialpub_version()


def test_versions_and_dates_run_newest_first() -> None:
    found = entries(CHANGELOG.read_text(encoding="utf-8"))
    assert len(found) >= 2
    assert [number for number, _ in found] == sorted((n for n, _ in found), reverse=True)
    assert [day for _, day in found] == sorted((d for _, d in found), reverse=True)
    assert len({number for number, _ in found}) == len(found)


def test_an_entry_out_of_order_is_seen() -> None:
    text = "## [0.1.0] - 2026-11-23\n\n## [0.2.0] - 2026-11-27\n"
    found = entries(text)
    assert [n for n, _ in found] != sorted((n for n, _ in found), reverse=True)

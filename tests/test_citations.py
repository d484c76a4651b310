"""Code, tests and benchmarks cite the repository's own documents, by sections that exist.

The specification and the HTTP contract used to live beside the checkout (``SPEC.md``,
``API.md``); they are now docs/design.md and docs/api.md, and a citation of the old files
would send a reader to a file the repository does not have.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_FOLDERS = ("app", "tests", "benchmarks")
_OLD = re.compile(r"\bSPEC\b|(?<![\w/.])API\.md\b|SPEC\.md")
_SECTION = re.compile(r"design\.md §§?(\d+(?:\.\d+)?)(?:-(\d+))?")


def _texts(folders: tuple[str, ...] = _FOLDERS) -> list[tuple[Path, str]]:
    found = []
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*")):
            if not path.is_file() or path.suffix not in {".py", ".md", ".txt", ".toml", ".json"}:
                continue
            try:
                found.append((path, path.read_text(encoding="utf-8")))
            except UnicodeDecodeError:
                continue
    return found


def test_nothing_cites_the_files_outside_the_repository() -> None:
    me = Path(__file__).resolve()
    offenders = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path, text in _texts()
        if path != me
        for number, line in enumerate(text.splitlines(), 1)
        if _OLD.search(line)
    ]
    assert offenders == [], "cite docs/design.md or docs/api.md:\n" + "\n".join(offenders)


def _design_sections() -> set[str]:
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    return set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", text, re.MULTILINE))


def test_every_cited_section_of_design_md_exists() -> None:
    sections = _design_sections()
    assert {"1", "2.1", "4", "5.5", "11"} <= sections
    missing = sorted(
        f"{path.relative_to(ROOT)}: §{first}"
        for path, text in _texts((*_FOLDERS, "docs"))
        for first, last in _SECTION.findall(text)
        if first not in sections or (last and last not in sections)
    )
    assert missing == [], "design.md has no such section:\n" + "\n".join(missing)

"""Every relative link of README.md, CHANGELOG.md and docs/**/*.md names a file or folder of
the repository, and every link to a heading of a page names a heading that page has."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: ``[text](target)`` and ``![alt](target)``, the target up to a space or the closing bracket.
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def pages() -> list[Path]:
    return [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = _FENCE.sub("", page.read_text(encoding="utf-8"))
    return {anchor(h) for h in re.findall(r"^#{1,6}\s+(.*)$", text, re.MULTILINE)}


def broken(page: Path) -> list[str]:
    text = _FENCE.sub("", page.read_text(encoding="utf-8"))
    found = []
    for target in _LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # an address elsewhere (https:, mailto:) or a heading of this page
        path, _, fragment = target.partition("#")
        resolved = (page.parent / path).resolve()
        if not resolved.exists():
            found.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
        elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
            found.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    return found


def test_the_pages_are_found() -> None:
    names = {page.name for page in pages()}
    assert {"README.md", "methods.md", "performance.md", "deploy.md"} <= names
    assert any(page.parent.name == "lab" for page in pages())


def test_every_relative_link_resolves() -> None:
    found = [line for page in pages() for line in broken(page)]
    assert found == [], "links that lead nowhere:\n" + "\n".join(found)


def test_a_broken_link_and_a_missing_heading_are_seen(tmp_path: Path, monkeypatch) -> None:
    page = tmp_path / "page.md"
    (tmp_path / "other.md").write_text("# Other\n\n## The `true_rows` guarantee\n")
    page.write_text(
        "[a](missing.md) [b](other.md#the-true_rows-guarantee) [c](other.md#nowhere)\n"
        "[d](https://example.org/x) ```\n"
    )
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert broken(page) == [
        "page.md: missing.md (no such file)",
        "page.md: other.md#nowhere (no such heading)",
    ]

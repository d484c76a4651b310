"""docs/api.md (with docs/api-releases.md and docs/api-audit.md, its other two pages) and the
OpenAPI document describe the same contract.

Every operation (method and path) the app's OpenAPI document lists has its own heading in
docs/api.md and every heading names an operation the app answers; every path the text cites
is one of the app's; every error code of the enumeration is explained in the errors table,
which lists nothing else; every warning code is named.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.core.errors import ErrorCode, WarningCode
from tests.support.openapi import openapi_document, operations

DOCS = Path(__file__).resolve().parents[2] / "docs"
#: The contract's pages: conventions, keys and series; releases and jobs; risk, audit, errors.
PAGES = ("api.md", "api-releases.md", "api-audit.md")
_METHOD = r"(?:GET|HEAD|POST|PUT|PATCH|DELETE)"
_HEADING = re.compile(rf"^#{{2,4}}\s+({_METHOD})\s+(/\S*)\s*$", re.MULTILINE)
#: A path the text cites: in backticks, or after a method.
_CITED = re.compile(rf"`(/(?:v1/|healthz|readyz|metrics)[^`\s?]*)|{_METHOD}\s+(/[^\s`?),]*)")
#: Served by FastAPI itself, outside the document's ``paths``, and the prefix of the API.
_OUTSIDE_PATHS = {"/openapi.json", "/docs", "/redoc", "/v1/"}


@pytest.fixture(scope="module")
def doc() -> str:
    return "\n".join((DOCS / page).read_text(encoding="utf-8") for page in PAGES)


def _documented(doc: str) -> set[tuple[str, str]]:
    return {(method, path) for method, path in _HEADING.findall(doc)}


def _template(path: str) -> re.Pattern[str]:
    parts = re.split(r"(\{[^}]+\})", path)
    return re.compile(
        "".join("[^/]+" if p.startswith("{") else re.escape(p) for p in parts if p) + "$"
    )


def test_every_operation_of_the_app_is_documented(doc: str) -> None:
    missing = sorted(operations() - _documented(doc))
    assert missing == [], f"operations without a heading in docs/api.md: {missing}"


def test_every_documented_operation_exists(doc: str) -> None:
    extra = sorted(_documented(doc) - operations())
    assert extra == [], f"docs/api.md documents operations the app lacks: {extra}"


def test_every_path_the_text_cites_exists(doc: str) -> None:
    templates = [_template(p) for p in openapi_document()["paths"]]
    cited = {a or b for a, b in _CITED.findall(doc)}
    assert cited, "the pattern finds no path: it is broken"
    unknown = sorted(
        p for p in cited if p not in _OUTSIDE_PATHS and not any(t.match(p) for t in templates)
    )
    assert unknown == [], f"docs/api.md cites paths the app does not answer: {unknown}"


def _errors_table(doc: str) -> list[str]:
    section = doc.split("\n## Errors\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([a-z_]+)` \|", section, re.MULTILINE)


def test_the_errors_table_explains_every_code_once_and_nothing_else(doc: str) -> None:
    table = _errors_table(doc)
    assert len(table) == len(set(table)), "a code is explained twice"
    assert set(table) == {code.value for code in ErrorCode}


def test_every_warning_code_is_named(doc: str) -> None:
    missing = [code.value for code in WarningCode if f"`{code.value}`" not in doc]
    assert missing == []


def _sections(doc: str) -> list[tuple[str, str, str]]:
    """``(h2 intro, operation heading, operation text)`` for each operation heading."""
    found = []
    for chapter in re.split(r"^## ", doc, flags=re.MULTILINE)[1:]:
        parts = re.split(rf"^### (?={_METHOD} )", chapter, flags=re.MULTILINE)
        for part in parts[1:]:
            head, _, text = part.partition("\n")
            found.append((parts[0], head, text))
    return found


def test_every_operation_says_who_may_call_it(doc: str) -> None:
    roles = re.compile(r"Roles?: |Any role|As `GET`|No key")
    sections = _sections(doc)
    assert len(sections) == len(operations())
    silent = [head for intro, head, text in sections if not roles.search(intro + text)]
    assert silent == [], f"operations whose roles docs/api.md does not state: {silent}"

"""app.analysis reads public JSON only: no API, services or database code."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "app" / "analysis"
FORBIDDEN = ("app.api", "app.services", "app.db")


def test_the_analysis_package_imports_no_service_code() -> None:
    for path in PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            for name in names:
                assert not name.startswith(FORBIDDEN), f"{path.name} imports {name}"

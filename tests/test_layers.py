"""The layers (issue 22 item 1): the pure core imports nothing of ``app`` outside itself."""

from __future__ import annotations

import ast
from pathlib import Path

import app.core

CORE = Path(app.core.__file__).parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(CORE.parent.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(path: Path) -> list[tuple[int, str]]:
    """Every module an import in ``path`` names, at any depth (functions, TYPE_CHECKING)."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            names.append((node.lineno, base))
    return names


def _outside_core(name: str) -> bool:
    return (name == "app" or name.startswith("app.")) and not (
        name == "app.core" or name.startswith("app.core.")
    )


def test_the_core_imports_nothing_of_app_outside_itself() -> None:
    files = sorted(CORE.rglob("*.py"))
    assert len(files) > 20
    upward = [
        f"{path.relative_to(CORE.parent.parent)}:{line}: imports {name}"
        for path in files
        for line, name in _imported(path)
        if _outside_core(name)
    ]
    assert upward == [], "app/core/ reaches up:\n" + "\n".join(upward)


def test_a_function_level_import_is_seen() -> None:
    """The walk finds imports inside functions and relative ones, not only top-level ones."""
    source = "def f():\n    from app.methods.registry import get_method\n"
    tree = ast.parse(source)
    found = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert found == ["app.methods.registry"] and _outside_core("app.methods.registry")
    assert not _outside_core("app.core.model") and _outside_core("app")

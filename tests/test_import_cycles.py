"""No import circles in ``app`` (issue 22 item 1), type-only ones included.

A module-level import (``TYPE_CHECKING`` blocks included, function bodies not: a lazy import
is how a higher layer is reached on purpose, and ``tests/test_layers.py`` rules on those) is
an edge; any strongly connected set of two or more modules is a circle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import app

ROOT = Path(app.__file__).parent.parent


def _modules() -> dict[str, Path]:
    found = {}
    for path in (ROOT / "app").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _edges(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
            elif isinstance(node, ast.Import):
                out.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join([*anchor, *([base] if base else [])])
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    out.add(full if full in modules else base)

    visit(ast.parse(path.read_text(), str(path)).body)
    return {m for m in out if m in modules and m != name}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected sets of two or more nodes (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return found


def test_app_has_no_import_circle() -> None:
    modules = _modules()
    assert len(modules) > 100
    graph = {name: _edges(name, path, modules) for name, path in modules.items()}
    assert circles(graph) == []


def test_a_type_only_circle_is_found(tmp_path: Path) -> None:
    modules = {"app.a": tmp_path / "a.py", "app.b": tmp_path / "b.py"}
    modules["app.a"].write_text("from app.b import B\n")
    modules["app.b"].write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from app.a import A\n"
    )
    graph = {name: _edges(name, path, modules) for name, path in modules.items()}
    assert circles(graph) == [["app.a", "app.b"]]

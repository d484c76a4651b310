"""The layers (issue 22 items 1 and 2; README, "How it works"): the pure core imports nothing of
``app`` outside itself; nothing below the API imports it; the services reach the job worker
(``app/jobs/``) only through its face, :func:`app.jobs.submit`, which imports no service; and
no import circle passes through the services or the jobs, nor anywhere in ``app`` among the
imports a module runs or types with."""

from __future__ import annotations

import ast
from pathlib import Path

import app.core

CORE = Path(app.core.__file__).parent
APP = CORE.parent

#: The entry points above the API (the CLI, the in-process demo) and the API itself: the only
#: modules that may import ``app.api``.
_TOP = ("app.api", "app.cli", "app.demo", "app.__main__")
#: What the web view (``app/web/``) may import of ``app``: itself, the services and schemas
#: below it, the service errors and the runtime (the database it reads through).
_WEB_MAY = ("app.web", "app.services", "app.schemas", "app.errors", "app.runtime")
#: The job worker's face and the queue beneath it: what the services may reach of ``app.jobs``.
_JOBS_FACE = ("app.jobs", "app.jobs.queue")


def _module_name(path: Path) -> str:
    parts = path.relative_to(CORE.parent.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(path: Path, top_level: bool = False) -> list[tuple[int, str]]:
    """Every module an import in ``path`` names, at any depth (functions, TYPE_CHECKING), or
    with ``top_level`` only those a module runs or types with: its body, ``if`` and ``try``
    blocks (``TYPE_CHECKING`` included), not function bodies."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    return _imports_in(ast.parse(path.read_text(), str(path)), package, top_level)


def _imports_in(tree: ast.Module, package: str, top_level: bool) -> list[tuple[int, str]]:
    nodes = _module_level(tree.body) if top_level else ast.walk(tree)
    names: list[tuple[int, str]] = []
    for node in nodes:
        if isinstance(node, ast.Import):
            names += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            names.append((node.lineno, base))
            # ``from app.jobs import audit`` imports the module app.jobs.audit too.
            names += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return names


def _module_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements a module runs on import, ``if`` and ``try`` blocks opened."""
    found: list[ast.stmt] = []
    for node in body:
        if isinstance(node, ast.If):
            found += _module_level(node.body) + _module_level(node.orelse)
        elif isinstance(node, ast.Try):
            found += _module_level(node.body)
        else:
            found.append(node)
    return found


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
    # The jobs' face imports its queue, which the rules below see.
    assert "app.jobs.queue" in {name for _, name in _edges(APP / "jobs" / "__init__.py")}
    assert not _outside_core("app.core.model") and _outside_core("app")


def _in(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def _app_modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(APP.rglob("*.py"))}


def _edges(path: Path) -> list[tuple[int, str]]:
    """The modules of ``app`` that ``path`` imports (``from pkg import mod``: ``pkg.mod``)."""
    modules = _MODULES or _app_modules()
    return [(line, name) for line, name in _imported(path) if name in modules]


_MODULES = _app_modules()


def test_nothing_below_the_api_imports_it() -> None:
    upward = [
        f"{path.relative_to(APP.parent)}:{line}: imports {name}"
        for module, path in _app_modules().items()
        if not _in(module, _TOP)
        for line, name in _edges(path)
        if _in(name, _TOP)
    ]
    assert upward == [], "below the API, a module imports it:\n" + "\n".join(upward)


def test_services_reach_the_jobs_only_through_their_face() -> None:
    """Services submit jobs with :func:`app.jobs.submit`; the job's steps, the worker and the
    task sit above them (they call the services) and are none of theirs to import."""
    modules = _app_modules()
    assert "app.jobs.publication" in modules and "app.jobs.worker" in modules
    reaching = [
        f"{path.relative_to(APP.parent)}:{line}: imports {name}"
        for module, path in modules.items()
        if _in(module, ("app.services",))
        for line, name in _edges(path)
        if _in(name, ("app.jobs",)) and name != "app.jobs"
    ]
    assert reaching == [], "a service reaches into app.jobs:\n" + "\n".join(reaching)


def test_the_face_of_the_jobs_imports_no_service() -> None:
    """``app.jobs`` and its queue stand below the services, which import them."""
    modules = _app_modules()
    upward = [
        f"{modules[face].relative_to(APP.parent)}:{line}: imports {name}"
        for face in _JOBS_FACE
        for line, name in _edges(modules[face])
        if _in(name, ("app.services", "app.api", "app.cli", "app.demo"))
        or (_in(name, ("app.jobs",)) and name not in _JOBS_FACE)
    ]
    assert upward == [], "the jobs' face reaches up:\n" + "\n".join(upward)


def test_layers_below_the_services_import_neither_services_nor_jobs() -> None:
    """``app.runtime`` is not among them: opening a runtime resolves the secret and the admin
    key through the services; it stands beside the jobs, and no service imports it."""
    below = ("app.core", "app.db", "app.io", "app.methods", "app.schemas", "app.analysis")
    below += ("app.errors", "app.settings", "app.observability")
    upward = [
        f"{path.relative_to(APP.parent)}:{line}: imports {name}"
        for module, path in _app_modules().items()
        if _in(module, below)
        for line, name in _edges(path)
        if _in(name, ("app.services", "app.jobs"))
    ]
    assert upward == [], "a lower layer reaches up:\n" + "\n".join(upward)


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_circle_passes_through_the_services_or_the_jobs() -> None:
    """Imports at any depth count (a function-level import is a circle put off, not gone)."""
    modules = _app_modules()
    graph = {
        module: {name for _, name in _edges(path) if name != module}
        for module, path in modules.items()
    }
    circles = [c for c in _circles(graph) if any(_in(m, ("app.services", "app.jobs")) for m in c)]
    assert circles == [], f"import circles: {circles}"


def test_a_circle_is_seen() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_app_has_no_module_level_import_circle() -> None:
    """Issue 22 item 1: no circle anywhere in ``app`` among the imports a module runs or types
    with, ``TYPE_CHECKING`` ones included (function-level imports are ruled on above)."""
    graph = {
        module: {name for _, name in _imported(path, top_level=True) if name in _MODULES} - {module}
        for module, path in _MODULES.items()
    }
    assert _circles(graph) == []


def test_a_type_only_import_is_module_level() -> None:
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from app.a import A\n"
    inside = "def f():\n    from app.b import B\n"
    assert "app.a" in [n for _, n in _imports_in(ast.parse(source), "app", top_level=True)]
    assert _imports_in(ast.parse(inside), "app", top_level=True) == []


def test_no_service_imports_the_runtime() -> None:
    """A service gets what it needs as arguments (a session, a database), never the process's
    runtime, which opens through the services (and so stands above them)."""
    reaching = [
        f"{path.relative_to(APP.parent)}:{line}: imports {name}"
        for module, path in _app_modules().items()
        if _in(module, ("app.services",))
        for line, name in _edges(path)
        if _in(name, ("app.runtime",))
    ]
    assert reaching == [], "\n".join(reaching)


def test_the_web_view_imports_only_the_services_and_schemas() -> None:
    """The web view stands beside the API's routes: it renders what the services return,
    and reaches neither the API, the database nor the core on its own."""
    modules = _app_modules()
    assert "app.web.pages" in modules
    reaching = [
        f"{path.relative_to(APP.parent)}:{line}: imports {name}"
        for module, path in modules.items()
        if _in(module, ("app.web",))
        for line, name in _edges(path)
        if not _in(name, _WEB_MAY)
    ]
    assert reaching == [], "the web view reaches past the services:\n" + "\n".join(reaching)


def test_only_the_api_includes_the_web_view() -> None:
    importers = sorted(
        module
        for module, path in _app_modules().items()
        if not _in(module, ("app.web",))
        and any(_in(name, ("app.web",)) for _, name in _edges(path))
    )
    assert importers == ["app.api.main"]

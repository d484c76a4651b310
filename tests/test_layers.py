"""The layers (docs/architecture.md, "Layers"): every module of ``app`` imports only its own layer
and the layers below it, at any depth (function-level and ``TYPE_CHECKING`` imports count).

The order, from the ground up, as the code stands (:data:`LAYERS`):

0. ``app.core``: the pure core (no I/O, no framework, no database);
1. ``app.settings``, ``app.observability``, ``app.analysis``, ``app.version``: settings, logs
   and metrics, the version, and
   the analyst's reader of public files (they import nothing of ``app`` but the core);
2. ``app.io``, ``app.errors``: corpora and releases as files and streams; the service errors;
3. ``app.db``: the database (models, repositories, engine);
4. ``app.methods``, ``app.schemas``: the method registry's storage; request and response bodies;
5. ``app.queue``: the job queue, through which a service defers a job;
6. ``app.services``: the use cases;
7. ``app.runtime``: what a process holds (opening it resolves the secret through the services);
8. ``app.jobs``: the job worker, which runs the task the queue names and calls the services;
9. ``app.web``: the web view, rendered from the services;
10. ``app.api``: the HTTP API (its app includes the web view and may run a worker in-process);
11. ``app.demo``: the in-process demo, which drives the API;
12. ``app.cli``, ``app.cli_*``, ``app.__main__``, and ``app`` itself (its face registers the
    methods): the command line.

Beside the order: the services reach the job worker only through the queue; nothing below
the API imports it; no import circle anywhere."""

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
#: The layers of ``app``, from the ground up (the module docstring says why each stands where it
#: does). A module belongs to the layer of the longest prefix that names it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("app.core",),
    ("app.settings", "app.observability", "app.analysis", "app.version"),
    ("app.io", "app.errors"),
    ("app.db",),
    ("app.methods", "app.schemas"),
    ("app.queue",),
    ("app.services",),
    ("app.runtime",),
    ("app.jobs",),
    ("app.web",),
    ("app.api",),
    ("app.demo",),
    ("app.cli", "app.__main__", "app"),
)


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
    # A service's import of the queue is among the edges the rules below see.
    assert "app.queue" in {name for _, name in _edges(APP / "services" / "publishing.py")}
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


def test_services_reach_the_jobs_only_through_the_queue() -> None:
    """Services defer jobs with :func:`app.queue.submit`; the job's steps, the worker and the
    task sit above them (they call the services) and are none of theirs to import."""
    modules = _app_modules()
    assert "app.jobs.publication" in modules and "app.queue" in modules
    reaching = [
        f"{path.relative_to(APP.parent)}:{line}: imports {name}"
        for module, path in modules.items()
        if _in(module, ("app.services",))
        for line, name in _edges(path)
        if _in(name, ("app.jobs",))
    ]
    assert reaching == [], "a service reaches into app.jobs:\n" + "\n".join(reaching)


def test_the_queue_imports_neither_services_nor_jobs() -> None:
    """``app.queue`` stands below the services, which import it; the task it names is
    registered by :mod:`app.jobs.task`, which procrastinate imports by name."""
    modules = _app_modules()
    upward = [
        f"{modules['app.queue'].relative_to(APP.parent)}:{line}: imports {name}"
        for line, name in _edges(modules["app.queue"])
        if _in(name, ("app.services", "app.jobs", "app.runtime", "app.api", "app.cli"))
    ]
    assert upward == [], "the queue reaches up:\n" + "\n".join(upward)


def test_layers_below_the_services_import_neither_services_nor_jobs() -> None:
    """``app.runtime`` is not among them: opening a runtime resolves the secret and the admin
    key through the services; it stands beside the jobs, and no service imports it."""
    below = ("app.core", "app.db", "app.io", "app.methods", "app.schemas", "app.analysis")
    below += ("app.errors", "app.settings", "app.observability", "app.queue")
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
    """No circle anywhere in ``app`` among the imports a module runs or types
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


def layer_of(module: str) -> int:
    """The index in :data:`LAYERS` of the longest prefix naming ``module``."""
    best, rank = -1, -1
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            named = module == prefix or module.startswith(prefix + ".")
            # ``app.cli_keys`` is of the command line too: ``app.cli`` names it by its prefix.
            named = named or (prefix == "app.cli" and module.startswith("app.cli_"))
            if named and len(prefix) > best:
                best, rank = len(prefix), index
    return rank


def upward_imports(modules: dict[str, Path]) -> list[str]:
    """Every import, at any depth, of a module in a layer above the importer's."""
    return [
        f"{path.relative_to(APP.parent)}:{line}: {module} (layer {layer_of(module)}) "
        f"imports {name} (layer {layer_of(name)})"
        for module, path in modules.items()
        for line, name in _edges(path)
        if layer_of(name) > layer_of(module)
    ]


def test_every_module_has_a_layer() -> None:
    unplaced = [module for module in _app_modules() if layer_of(module) < 0]
    assert unplaced == [], f"modules in no layer: {unplaced}"


def test_every_layer_imports_only_downwards() -> None:
    upward = upward_imports(_app_modules())
    assert upward == [], "an import runs back up:\n" + "\n".join(upward)


def test_an_upward_import_is_seen(tmp_path: Path) -> None:
    """The check fails on an import that runs back up: a service importing the job worker."""
    assert layer_of("app.cli_keys") == layer_of("app.cli") > layer_of("app.api")
    assert layer_of("app.core.risk.state") == 0 and layer_of("app.queue") < layer_of("app.services")
    service = tmp_path / "app" / "services" / "bad.py"
    service.parent.mkdir(parents=True)
    service.write_text("def f():\n    from app.jobs.worker import run_worker\n")
    found = [
        name
        for _, name in _imports_in(ast.parse(service.read_text()), "app.services", False)
        if layer_of(name) > layer_of("app.services.bad")
    ]
    assert found == ["app.jobs.worker", "app.jobs.worker.run_worker"]

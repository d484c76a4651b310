"""The methods by name: every sub-package of :mod:`app.methods` with a ``METHOD``.

Discovered rather than listed, so that adding a method is adding its package and nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

import app.methods
from app.core.errors import InvalidParameter
from app.methods.base import Method

__all__ = ["all_methods", "get_method", "method_names"]


@cache
def _methods() -> dict[str, Method]:
    found: list[Method] = []
    for info in pkgutil.iter_modules(app.methods.__path__):
        if not info.ispkg:
            continue
        module = importlib.import_module(f"app.methods.{info.name}")
        declared = getattr(module, "METHOD", None)
        if isinstance(declared, Method):
            found.append(declared)
    found.sort(key=lambda m: (m.rank, m.name))
    return {m.name: m for m in found}


def all_methods() -> tuple[Method, ...]:
    """Every method, in listing order."""
    return tuple(_methods().values())


def method_names() -> tuple[str, ...]:
    return tuple(_methods())


def get_method(name: str) -> Method:
    """The method called ``name``; :class:`InvalidParameter` naming ``method`` otherwise."""
    found = _methods().get(name)
    if found is None:
        raise InvalidParameter(
            f"method: unknown method {name!r}; choose one of {', '.join(method_names())}",
            {"param": "method"},
        )
    return found

"""Publication methods, one package each, registered into :mod:`app.core.methods`.

A method's package declares a :class:`~app.core.methods.Method` named ``METHOD`` in its
``__init__``: its parameters (parse and echo), its publish function (a pure core function), the
rank it is listed at, and, as dotted paths, its storage (private state kept between releases,
public layout kept beside the release) and the OpenAPI schema of its public release. Importing
this package discovers every such sub-package and registers its ``METHOD`` in the core's
registry, so that adding a method is adding its package and nothing else. The declarations
import only :mod:`app.core` and this package's ``base`` and ``family``, so that the core's
pipeline and the compute child can use them without the database or web stack; the paths are
resolved by the services that need them.
"""

from __future__ import annotations

import importlib
import pkgutil

from app.core.methods import Method, register

__all__ = ["discover"]


def discover() -> tuple[Method, ...]:
    """Register the ``METHOD`` of every sub-package (found on this package's path)."""
    found: list[Method] = []
    for info in pkgutil.iter_modules(__path__):
        if not info.ispkg:
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        declared = getattr(module, "METHOD", None)
        if isinstance(declared, Method):
            found.append(register(declared))
    return tuple(found)


discover()

"""The methods by name, as the core's registry (:mod:`app.core.methods`) holds them.

:mod:`app.methods` fills it when imported (every sub-package with a ``METHOD``); these names
are the core's, kept here for the services, CLI and benchmarks that read them.
"""

from __future__ import annotations

from app.core.methods import all_methods, get_method, method_names

__all__ = ["all_methods", "get_method", "method_names"]

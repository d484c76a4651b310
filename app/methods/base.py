"""Helpers for a method's declaration: dotted paths resolved on use.

:class:`Method` and :class:`Publisher` are the core's (:mod:`app.core.methods`), re-exported
here for the declarations.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from app.core.methods import Method, Publisher
from app.core.model import Publication, Transaction
from app.core.progress import ProgressCallback

if TYPE_CHECKING:
    from app.core.history import SeriesHistory

__all__ = ["Method", "Publisher", "lazy_publisher", "resolve"]


def resolve(path: str) -> Any:
    """The attribute a ``"module:attribute"`` path names (imported now)."""
    module, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module), attribute)


def lazy_publisher(path: str) -> Publisher:
    """The publisher at ``"module:function"``, imported on its first call: a method's module
    is loaded only when a series uses it (or the compute fork server preloads it)."""

    def publish(
        history: SeriesHistory,
        corpus: Sequence[Transaction],
        private_terms: frozenset[str],
        params: Any,
        progress: ProgressCallback | None = None,
    ) -> Publication:
        found: Publisher = resolve(path)
        return found(history, corpus, private_terms, params, progress)

    publish.__qualname__ = publish.__name__ = path.partition(":")[2]
    return publish

"""What a publication method declares (:class:`Method`) and what its storage provides."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from app.core.model import Publication, Transaction
from app.core.progress import ProgressCallback

if TYPE_CHECKING:
    from app.core.history import SeriesHistory

__all__ = ["Method", "Publisher", "lazy_publisher", "resolve"]


class Publisher(Protocol):
    """A pure core function publishing one corpus as the next release of a series."""

    def __call__(
        self,
        history: SeriesHistory,
        corpus: Sequence[Transaction],
        private_terms: frozenset[str],
        params: Any,
        progress: ProgressCallback | None = None,
    ) -> Publication: ...


@dataclass(frozen=True, slots=True)
class Method:
    """One publication method (docs/api.md ``method``).

    Attributes
    ----------
    name:
        The API name.
    rank:
        Position in listings (``sanony``, the default, first).
    parameters:
        The names of the parameters it reads (its ``params``); others are rejected.
    parse:
        Raw ``params`` (or ``None``) to the effective parameters; raises
        :class:`~app.core.errors.InvalidParameter` naming the field.
    echo:
        Effective parameters to the JSON the API echoes (series, releases).
    publish:
        The pure core function.
    modules:
        Modules ``publish`` imports on first use, preloaded by the compute fork server.
    individuals:
        ``"required"`` (the upload must name individuals), ``"checked"`` (the core requires
        them; the upload format may omit them and the publication fails naming the item) or
        ``"ignored"``.
    risk_threshold:
        The serial-risk threshold ``r_th`` the series is assessed against by default, or
        ``None`` for a method that makes no serial claim (risk is assessed at the default).
    storage:
        ``"module:attribute"`` of its :class:`~app.methods.storage.MethodStorage` (private
        state between releases, public layout beside the release); ``None``: nothing more
        than the generic release.
    release_schema:
        ``"module:attribute"`` of the pydantic model of its public release, when it is not
        the Anony-style ``ReleaseOut`` (OpenAPI).
    summary:
        One line for listings and the OpenAPI description.
    """

    name: str
    rank: int
    parameters: tuple[str, ...]
    parse: Callable[[Mapping[str, Any] | None], Any]
    echo: Callable[[Any], dict[str, Any]]
    publish: Publisher
    modules: tuple[str, ...] = ()
    individuals: str = "ignored"
    risk_threshold: Callable[[Any], float | None] = lambda params: None
    storage: str | None = None
    release_schema: str | None = None
    summary: str = ""


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

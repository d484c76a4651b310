"""What a publication method is (:class:`Method`) and the registry of methods by name.

The core owns the shape and the registry; it knows no method. Each method's package under
:mod:`app.methods` declares its :class:`Method` and :func:`register` s it when
:mod:`app.methods` is imported (the ``app`` package imports it, so every entry point finds the
registry filled). :func:`get_method` imports nothing: the core never reaches up to the
packages that register into it (``tests/test_layers.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from app.core.errors import InvalidParameter
from app.core.model import Publication, Transaction
from app.core.progress import ProgressCallback

if TYPE_CHECKING:
    from app.core.history import SeriesHistory

__all__ = [
    "Method",
    "Publisher",
    "all_methods",
    "declared_params",
    "get_method",
    "method_names",
    "register",
    "unregister",
]


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
        ``"module:attribute"`` of its ``MethodStorage`` (``app/methods/storage.py``: private
        state between releases, public layout beside the release); ``None``: nothing more
        than the generic release. A path, resolved by the services: the core reads no storage.
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


_REGISTRY: dict[str, Method] = {}


def register(method: Method) -> Method:
    """Add ``method`` to the registry (again: its declaration replaces the one of its name)."""
    _REGISTRY[method.name] = method
    return method


def unregister(name: str) -> None:
    """Remove the method called ``name``, if registered (tests' toy methods)."""
    _REGISTRY.pop(name, None)


def all_methods() -> tuple[Method, ...]:
    """Every registered method, in listing order (rank, then name)."""
    return tuple(sorted(_REGISTRY.values(), key=lambda m: (m.rank, m.name)))


def method_names() -> tuple[str, ...]:
    return tuple(m.name for m in all_methods())


def get_method(name: str) -> Method:
    """The method called ``name``; :class:`InvalidParameter` naming ``method`` otherwise.

    With nothing registered the error says so: the caller's process never imported
    :mod:`app.methods` (importing any ``app`` module does, through ``app/__init__.py``).
    """
    found = _REGISTRY.get(name)
    if found is not None:
        return found
    if not _REGISTRY:
        raise LookupError(
            f"method {name!r}: no method is registered; app.methods registers them when it "
            "is imported (app/__init__.py imports it), and register() adds one"
        )
    raise InvalidParameter(
        f"method: unknown method {name!r}; choose one of {', '.join(method_names())}",
        {"param": "method"},
    )


def declared_params(name: str) -> tuple[str, ...]:
    """The names of the parameters the method called ``name`` reads."""
    return get_method(name).parameters

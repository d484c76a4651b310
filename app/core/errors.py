"""Errors raised by the pure core. They carry no HTTP knowledge; ``app.api`` maps them."""

from __future__ import annotations

__all__ = ["CoreError", "InvalidCorpus", "InvalidParameter", "PublicationFailed"]


class CoreError(Exception):
    """Base of every error the core raises on purpose."""

    code = "core_error"

    def __init__(self, message: str, details: dict[str, object] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}


class InvalidCorpus(CoreError):
    """The corpus cannot be published as given (names the item at fault in ``details``)."""

    code = "invalid_corpus"


class InvalidParameter(CoreError):
    """A method parameter is missing, of the wrong type or out of range."""

    code = "invalid_parameter"


class PublicationFailed(CoreError):
    """The mechanism could not reach its guarantee within its guard; nothing may be stored."""

    code = "publication_failed"

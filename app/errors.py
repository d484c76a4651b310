"""Service errors: one base carrying its HTTP status; the API renders them all one way.

Families per domain subclass these. Core errors (:mod:`app.core.errors`) carry no HTTP
knowledge; :func:`from_core` maps them here.
"""

from __future__ import annotations

from typing import Any, ClassVar

from app.core.errors import CoreError, InvalidCorpus, InvalidParameter, PublicationFailed

__all__ = [
    "AppError",
    "BadRequest",
    "Unauthorized",
    "Forbidden",
    "NotFound",
    "Conflict",
    "PayloadTooLarge",
    "UnsupportedMediaType",
    "Unprocessable",
    "from_core",
]


class AppError(Exception):
    """Base of every error answered on purpose: ``{"error": {code, message, details}}``."""

    status_code: ClassVar[int] = 500
    code: str = "internal_error"

    def __init__(
        self, message: str, details: dict[str, Any] | None = None, *, code: str | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}
        if code is not None:
            self.code = code

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, "details": self.details}}


class BadRequest(AppError):
    status_code = 400
    code = "bad_request"


class Unauthorized(AppError):
    status_code = 401
    code = "unauthorized"


class Forbidden(AppError):
    status_code = 403
    code = "forbidden"


class NotFound(AppError):
    status_code = 404
    code = "not_found"


class Conflict(AppError):
    status_code = 409
    code = "conflict"


class PayloadTooLarge(AppError):
    status_code = 413
    code = "payload_too_large"


class UnsupportedMediaType(AppError):
    status_code = 415
    code = "unsupported_media_type"


class Unprocessable(AppError):
    status_code = 422
    code = "unprocessable"


_CORE_STATUS: dict[type[CoreError], type[AppError]] = {
    InvalidCorpus: Unprocessable,
    InvalidParameter: Unprocessable,
    PublicationFailed: Unprocessable,
}


def from_core(error: CoreError) -> AppError:
    """The service error for a core error (same code, message and details)."""
    family = next(
        (app for core, app in _CORE_STATUS.items() if isinstance(error, core)), Unprocessable
    )
    return family(error.message, dict(error.details), code=error.code)

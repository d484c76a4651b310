"""Service errors: one base carrying its HTTP status; the API renders them all one way.

Families per domain subclass these. Core errors (:mod:`app.core.errors`) carry no HTTP
knowledge; :func:`from_core` maps them here.
"""

from __future__ import annotations

from typing import Any, ClassVar

from app.core.errors import (
    CoreError,
    ErrorCode,
    InvalidCorpus,
    InvalidParameter,
    PublicationFailed,
)

__all__ = [
    "AppError",
    "BadRequest",
    "Unauthorized",
    "Forbidden",
    "NotFound",
    "Conflict",
    "Gone",
    "PayloadTooLarge",
    "UnsupportedMediaType",
    "Unprocessable",
    "ServiceUnavailable",
    "InsufficientStorage",
    "from_core",
    "stored_code",
]


class AppError(Exception):
    """Base of every error answered on purpose: ``{"error": {code, message, details}}``."""

    status_code: ClassVar[int] = 500
    code: ErrorCode = ErrorCode.INTERNAL_ERROR
    #: Seconds a client should wait before it tries again (the ``Retry-After`` header).
    retry_after: ClassVar[int | None] = None

    def __init__(
        self, message: str, details: dict[str, Any] | None = None, *, code: ErrorCode | None = None
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
    code = ErrorCode.BAD_REQUEST


class Unauthorized(AppError):
    status_code = 401
    code = ErrorCode.UNAUTHORIZED


class Forbidden(AppError):
    status_code = 403
    code = ErrorCode.FORBIDDEN


class NotFound(AppError):
    status_code = 404
    code = ErrorCode.NOT_FOUND


class Conflict(AppError):
    status_code = 409
    code = ErrorCode.CONFLICT


class Gone(AppError):
    """Known, and no longer served (a withdrawn release)."""

    status_code = 410
    code = ErrorCode.RELEASE_WITHDRAWN


class PayloadTooLarge(AppError):
    status_code = 413
    code = ErrorCode.PAYLOAD_TOO_LARGE


class UnsupportedMediaType(AppError):
    status_code = 415
    code = ErrorCode.UNSUPPORTED_MEDIA_TYPE


class Unprocessable(AppError):
    status_code = 422
    code = ErrorCode.UNPROCESSABLE


class ServiceUnavailable(AppError):
    """The database did not answer (a restart, a failover, a cut connection): nothing was
    half-written, and the same request can be sent again."""

    status_code = 503
    code = ErrorCode.DATABASE_UNAVAILABLE
    retry_after = 5


class InsufficientStorage(AppError):
    """PostgreSQL has no space left to store what was asked; nothing was stored."""

    status_code = 507
    code = ErrorCode.STORAGE_FULL
    retry_after = 60


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


def stored_code(value: object, default: ErrorCode) -> ErrorCode:
    """The code a stored error body names (a job's ``error``), ``default`` when it names none.

    A stored body is JSON, so its code comes back as a plain string; an unknown one (written
    by a release of the service that knew more codes) falls back to ``default``.
    """
    try:
        return ErrorCode(str(value))
    except ValueError:
        return default

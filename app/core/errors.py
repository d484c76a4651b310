"""Errors raised by the pure core, and every code the service answers.

The core's errors carry no HTTP knowledge; ``app.api`` maps them. :class:`ErrorCode` is the
one enumeration of the ``code`` of an error body (docs/api-audit.md, "Errors"), and
:class:`WarningCode` the one of a warning's ``code``: every layer names a code through them,
never as a string literal. They live here so the core can use them without importing upward.
Being ``StrEnum`` members, they render in JSON as the plain strings they were before.
"""

from __future__ import annotations

from enum import StrEnum, unique

__all__ = [
    "CoreError",
    "ErrorCode",
    "InvalidCorpus",
    "InvalidParameter",
    "PublicationFailed",
    "WarningCode",
]


@unique
class ErrorCode(StrEnum):
    """The ``code`` of ``{"error": {"code", "message", "details"}}``, by HTTP status."""

    # 400: the body cannot be read.
    BAD_REQUEST = "bad_request"
    INVALID_JSON = "invalid_json"
    INVALID_CSV = "invalid_csv"
    INVALID_ENCODING = "invalid_encoding"
    # 401, 403: the key.
    UNAUTHORIZED = "unauthorized"
    FORBIDDEN = "forbidden"
    # 404, 405: nothing there.
    NOT_FOUND = "not_found"
    NO_STATISTICS_FILE = "no_statistics_file"
    NO_ATTACK_REPORT = "no_attack_report"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    # 409: the state forbids it.
    CONFLICT = "conflict"
    NAME_TAKEN = "name_taken"
    IDEMPOTENCY_KEY_REUSED = "idempotency_key_reused"
    JOB_FINISHED = "job_finished"
    ALREADY_WITHDRAWN = "already_withdrawn"
    SERIES_HAS_RELEASES = "series_has_releases"
    SERIES_HAS_JOBS = "series_has_jobs"
    KEY_EXPIRED = "key_expired"
    KEY_ALREADY_ROTATED = "key_already_rotated"
    # 410: there, and no longer served.
    RELEASE_WITHDRAWN = "release_withdrawn"
    # 413, 415, 416: the representation.
    PAYLOAD_TOO_LARGE = "payload_too_large"
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"
    UNSUPPORTED_CHARSET = "unsupported_charset"
    UNSUPPORTED_CONTENT_ENCODING = "unsupported_content_encoding"
    RANGE_NOT_SATISFIABLE = "range_not_satisfiable"
    # 422: the input is read but refused.
    UNPROCESSABLE = "unprocessable"
    INVALID_REQUEST = "invalid_request"
    INVALID_BODY = "invalid_body"
    INVALID_CORPUS = "invalid_corpus"
    INVALID_PARAMETER = "invalid_parameter"
    PUBLICATION_FAILED = "publication_failed"
    CORE_ERROR = "core_error"
    # A failed job (``GET /v1/jobs/{id}`` ``error``; 422 with ``wait=true``).
    JOB_CANCELLED = "job_cancelled"
    JOB_INTERRUPTED = "job_interrupted"
    JOB_INPUT_MISSING = "job_input_missing"
    # 500, 503, 507 and any other status.
    INTERNAL_ERROR = "internal_error"
    NOT_READY = "not_ready"
    DATABASE_UNAVAILABLE = "database_unavailable"
    STORAGE_FULL = "storage_full"
    HTTP_ERROR = "http_error"


@unique
class WarningCode(StrEnum):
    """The ``code`` of a warning (a series', a job's or a publication's ``warnings``)."""

    PUBLISHER_SEED = "publisher_seed"
    DISCLOSING_POPULATION_RATE = "disclosing_population_rate"
    TERM_FOLDS_ONTO_PRIVATE_TERM = "term_folds_onto_private_term"
    PRIVATE_TERM_NOT_IN_SNAPSHOT = "private_term_not_in_snapshot"
    PRIVATE_TERM_PUBLISHED_EARLIER = "private_term_published_earlier"
    ESCALATED = "escalated"
    PUBLISHED_TOTAL_EXPOSURE = "published_total_exposure"


class CoreError(Exception):
    """Base of every error the core raises on purpose."""

    code: ErrorCode = ErrorCode.CORE_ERROR

    def __init__(self, message: str, details: dict[str, object] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}


class InvalidCorpus(CoreError):
    """The corpus cannot be published as given (names the item at fault in ``details``)."""

    code = ErrorCode.INVALID_CORPUS


class InvalidParameter(CoreError):
    """A method parameter is missing, of the wrong type or out of range."""

    code = ErrorCode.INVALID_PARAMETER


class PublicationFailed(CoreError):
    """The mechanism could not reach its guarantee within its guard; nothing may be stored."""

    code = ErrorCode.PUBLICATION_FAILED

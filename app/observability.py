"""Metrics (Prometheus) and structured logs (structlog, with the job id bound)."""

from __future__ import annotations

import logging
import logging.config
import sys
from typing import Any
from urllib.parse import urlsplit

import structlog
from prometheus_client import Counter, Histogram

__all__ = [
    "REQUESTS",
    "REQUEST_SECONDS",
    "PHASE_SECONDS",
    "ROWS_PUBLISHED",
    "COUNTERFEITS",
    "JOBS",
    "configure_logging",
    "logger",
    "logging_config",
]

REQUESTS = Counter("serialpub_http_requests_total", "HTTP requests", ["method", "route", "status"])
REQUEST_SECONDS = Histogram(
    "serialpub_http_request_seconds", "HTTP request duration", ["method", "route"]
)
PHASE_SECONDS = Histogram(
    "serialpub_publication_phase_seconds",
    "Publication duration by phase",
    ["phase"],
    buckets=(0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800),
)
ROWS_PUBLISHED = Counter("serialpub_rows_published_total", "Rows published", ["method"])
COUNTERFEITS = Counter(
    "serialpub_counterfeits_published_total", "Published counterfeit rows (BP + FP1)", ["method"]
)
JOBS = Counter("serialpub_jobs_total", "Publication jobs by outcome", ["status"])
SUPPRESSED = Counter(
    "serialpub_suppressed_copies_total",
    "Private-term copies suppressed as the last resort of the post-condition (SPEC 5)",
    ["method"],
)

_configured = False


class PathOnly(logging.Filter):
    """Drops the query string from uvicorn's access lines: queries carry private terms
    (``?private_terms=HIV``), labels and pseudonyms, which do not belong in logs."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            record.args = (*args[:2], urlsplit(args[2]).path, *args[3:])
        return True


def _renderer(fmt: str) -> structlog.typing.Processor:
    if fmt == "json":
        return structlog.processors.JSONRenderer()
    return structlog.dev.ConsoleRenderer()


def logging_config(level: str = "INFO", fmt: str = "console") -> dict[str, Any]:
    """A :func:`logging.config.dictConfig` for the stdlib loggers (uvicorn's, alembic's,
    procrastinate's, warnings): one formatter, structlog's, so that with ``json`` every line a
    process writes is one JSON object, tracebacks included (as the ``exception`` field).
    Passed to uvicorn as ``log_config``, so its worker processes use it as well."""
    level = level.upper()
    pre_chain: list[Any] = [
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    handler = {
        "class": "logging.StreamHandler",
        "formatter": "structlog",
        "stream": "ext://sys.stderr",
    }
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"path_only": {"()": PathOnly}},
        "formatters": {
            "structlog": {
                "()": structlog.stdlib.ProcessorFormatter,
                "foreign_pre_chain": pre_chain,
                "processors": [
                    structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                    structlog.processors.format_exc_info,
                    _renderer(fmt),
                ],
            }
        },
        "handlers": {
            "default": handler,
            "access": {**handler, "filters": ["path_only"]},
        },
        "root": {"handlers": ["default"], "level": level},
        "loggers": {
            "uvicorn": {"handlers": ["default"], "level": level, "propagate": False},
            "uvicorn.error": {"handlers": ["default"], "level": level, "propagate": False},
            "uvicorn.access": {"handlers": ["access"], "level": level, "propagate": False},
            "alembic": {"handlers": ["default"], "level": level, "propagate": False},
        },
    }


def configure_logging(level: str = "INFO", fmt: str = "console") -> None:
    """structlog over stdlib logging; ``json`` for machines, ``console`` for people. The
    stdlib loggers (uvicorn, alembic, procrastinate, warnings) go through the same renderer
    (:func:`logging_config`)."""
    global _configured
    if _configured:
        return
    _configured = True
    logging.config.dictConfig(logging_config(level, fmt))
    logging.captureWarnings(True)
    renderer = _renderer(fmt)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping().get(level.upper(), logging.INFO)
        ),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=True,
    )


def logger(name: str) -> structlog.typing.FilteringBoundLogger:
    return structlog.get_logger(name)  # type: ignore[no-any-return]

"""Metrics (Prometheus) and structured logs (structlog, with the job id bound)."""

from __future__ import annotations

import logging
import logging.config
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
    "DRY_RUNS",
    "configure_logging",
    "configure_structlog",
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
DRY_RUNS = Counter(
    "serialpub_dry_runs_total", "Dry runs (dry_run=true) by outcome; nothing stored", ["status"]
)
SUPPRESSED = Counter(
    "serialpub_suppressed_copies_total",
    "Private-term copies suppressed as the last resort of the post-condition (design.md §5)",
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


def _shared_processors() -> list[structlog.typing.Processor]:
    """What every line gets, structlog's events and stdlib records alike: the context bound
    with :mod:`structlog.contextvars` (the job id), the level, the logger's name, the time."""
    return [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]


def logging_config(level: str = "INFO", fmt: str = "console") -> dict[str, Any]:
    """A :func:`logging.config.dictConfig` for the stdlib loggers (uvicorn's, SQLAlchemy's,
    alembic's, procrastinate's, warnings): one formatter, structlog's
    :class:`~structlog.stdlib.ProcessorFormatter`, which renders stdlib records and structlog's
    own events (:func:`configure_logging` routes them through stdlib logging) with the same
    processors, so that with ``json`` every line a process writes is one JSON object with the
    same keys (``event``, ``level``, ``logger``, ``timestamp``, the bound context), tracebacks
    included (as the ``exception`` field). Passed to uvicorn as ``log_config``, so its worker
    processes use it as well."""
    level = level.upper()
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
                # Applied to stdlib records only; structlog's events went through the same
                # processors before they were handed to stdlib logging.
                "foreign_pre_chain": _shared_processors(),
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
            # SQLAlchemy's and procrastinate's records reach the root's handler. SQLAlchemy
            # logs every statement (with its parameters) at INFO: its loggers stay at WARNING
            # (its own default) whatever SERIALPUB_LOG_LEVEL says.
            "sqlalchemy": {"level": "WARNING"},
        },
    }


def configure_structlog(level: str = "INFO") -> None:
    """structlog's events through stdlib logging, rendered by :func:`logging_config`'s
    formatter (``ProcessorFormatter.wrap_for_formatter``)."""
    structlog.configure(
        processors=[
            *_shared_processors(),
            structlog.processors.format_exc_info,
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping().get(level.upper(), logging.INFO)
        ),
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=True,
    )


def configure_logging(level: str = "INFO", fmt: str = "console") -> None:
    """structlog over stdlib logging; ``json`` for machines, ``console`` for people. The
    stdlib loggers (uvicorn, SQLAlchemy, alembic, procrastinate, warnings) and structlog's
    go through one handler and one renderer (:func:`logging_config`)."""
    global _configured
    if _configured:
        return
    _configured = True
    logging.config.dictConfig(logging_config(level, fmt))
    logging.captureWarnings(True)
    configure_structlog(level)


def logger(name: str) -> structlog.typing.FilteringBoundLogger:
    return structlog.get_logger(name)  # type: ignore[no-any-return]

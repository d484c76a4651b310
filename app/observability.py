"""Metrics (Prometheus) and structured logs (structlog, with the job id bound)."""

from __future__ import annotations

import logging
import sys

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
]

REQUESTS = Counter(
    "serialpub_http_requests_total", "HTTP requests", ["method", "route", "status"]
)
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


def configure_logging(level: str = "INFO", fmt: str = "console") -> None:
    """structlog over stdlib logging; ``json`` for machines, ``console`` for people."""
    global _configured
    if _configured:
        return
    _configured = True
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if fmt == "json" else structlog.dev.ConsoleRenderer()
    )
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

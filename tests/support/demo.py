"""Finding what ``serialpub demo`` created, for the tests that check it is gone."""

from __future__ import annotations

import re
from collections.abc import Iterable

import psycopg

from app.db.embedded import libpq_url

__all__ = ["database_exists", "demo_database"]


def demo_database(said: Iterable[str]) -> str:
    """The throw-away database the demo named in its first line (other sessions on the same
    server may be running demos of their own: only this one's is looked for)."""
    found = re.search(r"database (serialpub_demo_[0-9a-f]{12}) ", "\n".join(said))
    assert found, said
    return found.group(1)


def database_exists(url: str, name: str) -> bool:
    with psycopg.connect(libpq_url(url)) as conn:
        return (
            conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
            is not None
        )

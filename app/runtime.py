"""What a process holds while it runs: settings, database, the individual-id secret.

The API keeps it on ``app.state.runtime``; the job worker reads it through
:func:`current_runtime` (set when the worker starts).
"""

from __future__ import annotations

from dataclasses import dataclass

from app.db.engine import Database
from app.settings import Settings

__all__ = ["Runtime", "current_runtime", "set_runtime"]


@dataclass(slots=True)
class Runtime:
    settings: Settings
    db: Database
    secret: bytes


_current: Runtime | None = None


def set_runtime(runtime: Runtime | None) -> None:
    global _current
    _current = runtime


def current_runtime() -> Runtime:
    if _current is None:
        raise RuntimeError("the service runtime is not started")
    return _current

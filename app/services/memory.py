"""Giving memory back to the operating system after a large upload or job.

CPython frees a parsed upload or a finished publication into glibc's malloc, which keeps the
pages in its arenas: a process that has read a 200 MiB upload stays at its peak for as long as
it lives (the API process kept 2.1 GiB after a job in the issue's measurement), and a
container limit counts those pages. ``malloc_trim(0)`` returns the free pages at the top of
every arena; the deployment also caps the arenas (``MALLOC_ARENA_MAX=2`` in the image), which
bounds what a multi-threaded process can strand. On a libc without ``malloc_trim`` (musl,
macOS) this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
from collections.abc import Callable
from functools import cache

__all__ = ["give_back_memory"]


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        return ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None


def give_back_memory() -> bool:
    """Collect garbage and return free heap pages to the OS; ``True`` when glibc trimmed."""
    gc.collect()
    trim = _malloc_trim()
    if trim is None:
        return False
    return bool(trim(0))

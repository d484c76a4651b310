"""Figures of repeated benchmark runs joined into one (each figure of
docs/performance.md is a median over several runs, on a shared and noisy machine)."""

from __future__ import annotations

import statistics
from typing import Any


def median_result(results: list[Any]) -> Any:
    """Repeated runs as one: every number (nested per request or phase, and each element of
    a pair such as store seconds) the median over the runs that have it; any other value
    (a status, an answer) kept when every run agrees, else the list of what the runs gave;
    a value every run gives alike is kept as it is.

    >>> median_result([{"a": {"p99_ms": 3.0}, "s": (1.0, 4.0)}, {"a": {"p99_ms": 1.0},
    ...     "s": (2.0, 2.0)}, {"a": {"p99_ms": 2.0}, "s": (3.0, 3.0)}])
    {'a': {'p99_ms': 2.0}, 's': [2.0, 3.0]}
    >>> median_result([{"status": 201, "answer": "ok"}, {"status": 201, "answer": "late"}])
    {'status': 201, 'answer': ['ok', 'late']}
    """
    first = results[0]
    if isinstance(first, dict):
        return {key: median_result([r[key] for r in results if key in r]) for key in first}
    if isinstance(first, list | tuple):
        return [median_result(list(column)) for column in zip(*results, strict=True)]
    if all(r == first for r in results):
        return first
    if all(isinstance(r, int | float) and not isinstance(r, bool) for r in results):
        return float(statistics.median(results))
    return list(results)

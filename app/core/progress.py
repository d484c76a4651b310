"""Progress reporting for long computations, as a plain callable (no framework)."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["PHASES", "Progress", "ProgressCallback", "no_progress"]

#: Phases of a publication job, in order (docs/api.md ``phase``).
PHASES: tuple[str, ...] = ("anony", "bp", "fp1", "fp2", "verify", "store")

ProgressCallback = Callable[[str, float], None]


def no_progress(phase: str, fraction: float) -> None:
    """A callback that ignores progress."""


class Progress:
    """Reports ``(phase, fraction)`` where fraction is overall progress in ``[0, 1]``."""

    def __init__(self, callback: ProgressCallback | None, phases: tuple[str, ...] = PHASES) -> None:
        self._callback = callback or no_progress
        self._phases = phases

    def __call__(self, phase: str, within: float = 0.0) -> None:
        index = self._phases.index(phase) if phase in self._phases else 0
        overall = (index + min(max(within, 0.0), 1.0)) / len(self._phases)
        self._callback(phase, round(overall, 4))

"""Job progress: the core reports from a worker thread; the event loop writes it to the job row."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid

from app.db.engine import Database, is_transient
from app.db.repositories.jobs import JobRepository

__all__ = ["ProgressTracker", "flush_progress"]


class ProgressTracker:
    """Latest ``(phase, progress)`` and the seconds spent in each phase (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.phase: str | None = None
        self.progress = 0.0
        self.seconds: dict[str, float] = {}
        self._since = time.perf_counter()
        #: The clock of the current phase is stopped (:meth:`pause`).
        self._paused = False
        self.version = 0

    def __call__(self, phase: str, fraction: float) -> None:
        with self._lock:
            now = time.perf_counter()
            if phase != self.phase or self._paused:
                self._stop_clock(now)
                self.phase, self._since, self._paused = phase, now, False
            self.progress = max(self.progress, min(max(fraction, 0.0), 1.0))
            self.version += 1

    def pause(self) -> None:
        """Stop the current phase's clock; the phase stays shown until the next one starts.
        The compute child calls it when the core returns, so that the result's way back is
        not counted in the core's last phase."""
        with self._lock:
            self._stop_clock(time.perf_counter())
            self._paused = True

    def _stop_clock(self, now: float) -> None:
        if self.phase is not None and not self._paused:
            self.seconds[self.phase] = self.seconds.get(self.phase, 0.0) + now - self._since
        self._since = now

    def close(self) -> dict[str, float]:
        """End the current phase; the seconds per phase, rounded."""
        with self._lock:
            self._stop_clock(time.perf_counter())
            return {k: round(v, 4) for k, v in self.seconds.items()}

    def snapshot(self) -> tuple[int, str | None, float]:
        with self._lock:
            return self.version, self.phase, self.progress


async def write_progress(db: Database, job_id: uuid.UUID, tracker: ProgressTracker) -> None:
    _, phase, progress = tracker.snapshot()
    if phase is None:
        return
    async with db.session() as session:
        await JobRepository(session).set_progress(job_id, phase, progress)


async def flush_progress(
    db: Database, job_id: uuid.UUID, tracker: ProgressTracker, interval: float = 0.5
) -> None:
    """Write the tracker to the job row whenever it changed, every ``interval`` seconds."""
    seen = -1
    while True:
        await asyncio.sleep(interval)
        version = tracker.snapshot()[0]
        if version != seen:
            try:
                await write_progress(db, job_id, tracker)
            except Exception as exc:
                # Progress is for the reader; a database outage must not end the job (the
                # computation needs no database), and the next change is written again.
                if not is_transient(exc):
                    raise
                continue
            seen = version

"""The job's seconds per phase (no database)."""

from __future__ import annotations

import time

from app.jobs.progress import ProgressTracker


def test_pause_stops_the_phase_clock() -> None:
    tracker = ProgressTracker()
    tracker("verify", 0.8)
    time.sleep(0.05)
    tracker.pause()
    time.sleep(0.2)  # the result's way back: not the core's
    assert tracker.phase == "verify"
    tracker("store", 5 / 6)
    time.sleep(0.05)
    seconds = tracker.close()
    assert 0.05 <= seconds["verify"] < 0.2
    assert 0.05 <= seconds["store"] < 0.2

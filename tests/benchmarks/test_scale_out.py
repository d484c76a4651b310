"""``scale_out.py --repeat``: makespans joined per worker count."""

from __future__ import annotations

from benchmarks.scale_out import Run, median_runs


def _run(workers: int, makespan: float, peak: float) -> Run:
    return Run(workers, 6, makespan, 0.0, makespan * workers, (peak,) * workers, 10.0, {})


def test_speed_up_is_taken_within_each_repeat_then_the_median() -> None:
    repeats = [
        [_run(1, 60.0, 300), _run(2, 40.0, 310)],  # 1.50x
        [_run(1, 66.0, 320), _run(2, 30.0, 290)],  # 2.20x
        [_run(1, 63.0, 310), _run(2, 36.0, 300)],  # 1.75x
    ]
    one, two = median_runs(repeats)
    assert (one["workers"], one["makespan_s"], one["speed_up"]) == (1, 63.0, 1.0)
    assert (two["makespan_s"], two["makespan_range"], two["speed_up"]) == (36.0, [30.0, 40.0], 1.75)
    assert two["worker_peak_mib"] == 300 and two["repeats"] == 3

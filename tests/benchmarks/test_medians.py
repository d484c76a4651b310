"""Repeated benchmark runs joined: every figure the median over the runs."""

from __future__ import annotations

from benchmarks.medians import median_result


def test_each_figure_is_its_own_median() -> None:
    runs = [
        {"wrk": {"p99_ms": 30.0, "rps": 900.0}, "store_big_s": (5.0, 1.0), "load_start": 0.2},
        {"wrk": {"p99_ms": 10.0, "rps": 1100.0}, "store_big_s": (7.0, 3.0), "load_start": 0.9},
        {"wrk": {"p99_ms": 20.0, "rps": 1000.0}, "store_big_s": (6.0, 2.0), "load_start": 0.4},
    ]
    joined = median_result(runs)
    # Per figure, not the run with the median of one of them.
    assert joined["wrk"] == {"p99_ms": 20.0, "rps": 1000.0}
    assert joined["store_big_s"] == [6.0, 2.0]
    assert joined["load_start"] == 0.4


def test_a_figure_one_run_lacks_is_joined_over_the_others() -> None:
    joined = median_result([{"a": 1.0, "b": 4.0}, {"a": 3.0}])
    assert joined == {"a": 2.0, "b": 4.0}


def test_values_that_are_not_figures_are_kept_or_listed() -> None:
    joined = median_result([{"status": 201, "ok": True}, {"status": 201, "ok": False}])
    assert joined == {"status": 201, "ok": [True, False]}

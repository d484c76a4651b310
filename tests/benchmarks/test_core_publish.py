"""``core_publish.py --repeat``: a size's figure is the median over its runs."""

from __future__ import annotations

from benchmarks.core_publish import median_of


def test_repeated_runs_give_the_median_and_range_of_each_figure() -> None:
    runs = [
        {"size": 10, "median_seconds": 4.0, "last_release_seconds": 8.0, "peak_rss_mib": 150.0},
        {"size": 10, "median_seconds": 1.0, "last_release_seconds": None, "peak_rss_mib": 140.0},
        {"size": 10, "median_seconds": 2.0, "last_release_seconds": 6.0, "peak_rss_mib": 160.0},
    ]
    joined = median_of(runs)
    assert joined["median_seconds"] == 2.0 and joined["median_seconds_range"] == [1.0, 4.0]
    # A run without a figure (every release refused) is left out of that figure's median.
    assert joined["last_release_seconds"] == 7.0
    assert joined["last_release_seconds_range"] == [6.0, 8.0]
    assert joined["peak_rss_mib"] == 150.0 and joined["runs"] == 3 and joined["size"] == 10


def test_one_run_is_its_own_median() -> None:
    run = {"size": 5, "median_seconds": 1.5, "last_release_seconds": 2.5, "peak_rss_mib": 99.0}
    joined = median_of([run])
    assert joined["median_seconds"] == 1.5 and joined["median_seconds_range"] == [1.5, 1.5]

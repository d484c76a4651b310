"""``e2e_publish.py --repeat``: each release's figures as medians over runs."""

from __future__ import annotations

from benchmarks.e2e_publish import medians


def _result(against: int, wall: float, bp: float, api: int) -> dict:
    return {
        "size": 1000,
        "against": against,
        "wall": wall,
        "phases": {"bp": bp, "store": 1.0},
        "peak_rss_mib": {"api": api, "worker": 50},
        "load1": 0.5 + against,
        "load1_after": 1.0 + against,
    }


def test_runs_are_joined_per_release_by_median() -> None:
    runs = [
        [_result(0, 2.0, 1.0, 100), _result(1, 5.0, 3.0, 120)],
        [_result(0, 4.0, 2.0, 300), _result(1, 9.0, 1.0, 110)],
        [_result(0, 3.0, 5.0, 200)],  # release 2 refused in this run
    ]
    first, second = medians(runs)
    assert (first["against"], first["wall"], first["wall_range"], first["runs"]) == (
        0,
        3.0,
        [2.0, 4.0],
        3,
    )
    assert first["phases"]["bp"] == 2.0 and first["phases"]["store"] == 1.0
    assert first["phases"]["verify"] == 0.0  # a phase no run reported
    assert first["peak_rss_mib"] == {"api": 200, "worker": 50}
    # Joined over the two runs that published it.
    assert (second["wall"], second["runs"], second["peak_rss_mib"]["api"]) == (7.0, 2, 115.0)
    assert (second["load1"], second["load1_after"]) == (1.5, 2.0)

"""The series-length figure's reading of ``core_publish.py --series`` records."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.series_length_figure import load, median_runs, summary


def _write(path: Path, records: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def _record(label: str, release: int, seconds: float, peak: float) -> dict[str, object]:
    return {
        "label": label,
        "size": 1000,
        "release": release,
        "publish_seconds": seconds,
        "phases": {"anony": seconds / 2},
        "peak_rss_mib": peak,
        "rss_mib": peak - 1,
    }


def test_runs_in_the_order_asked_and_the_last_record_of_a_release_wins(tmp_path: Path) -> None:
    path = tmp_path / "series.jsonl"
    _write(
        path,
        [
            _record("before", 2, 9.0, 100),
            _record("after", 1, 1.0, 90),
            _record("before", 1, 1.0, 80),
            _record("before", 2, 2.0, 100),  # a rerun of release 2 replaces the first
        ],
    )
    runs = load(path, ["before", "after"])
    assert list(runs) == [("before", 1000), ("after", 1000)]
    assert [r["publish_seconds"] for r in runs[("before", 1000)]] == [1.0, 2.0]
    assert list(load(path, ["after"])) == [("after", 1000)]


def test_summary_gives_the_ratio_to_release_2_and_the_refusals(tmp_path: Path) -> None:
    path = tmp_path / "series.jsonl"
    refused = {"label": "x", "size": 1000, "release": 3, "refused": "2 rows over r_th"}
    _write(
        path,
        [
            _record("x", 1, 1.0, 100),
            _record("x", 2, 2.0, 100),
            {**refused, "publish_seconds": 5.0, "peak_rss_mib": 150},
            _record("x", 4, 6.0, 150),
        ],
    )
    (line,) = summary(load(path))
    assert "3 releases published, refused [3]" in line
    assert "release 2 2.00 s, release 4 6.00 s (3.0x)" in line
    assert "peak RSS 150 MiB (1.50x release 2's)" in line


def test_repeated_runs_join_by_median_and_a_release_refused_everywhere_stays_refused() -> None:
    def record(release: int, seconds: float, bp: float) -> dict[str, object]:
        return {
            "release": release,
            "publish_seconds": seconds,
            "cpu_seconds": seconds,
            "peak_rss_mib": 100.0 + seconds,
            "phases": {"bp": bp},
        }

    refused = {"release": 3, "refused": "no", "publish_seconds": 9.0, "peak_rss_mib": 1.0}
    runs = {
        ("x run1", 10): [record(1, 1.0, 0.5), record(2, 2.0, 1.0), refused],
        ("x run2", 10): [record(1, 3.0, 1.5), record(2, 8.0, 4.0), refused],
        ("x run3", 10): [record(1, 2.0, 1.0), record(2, 5.0, 9.0), refused],
        ("y", 10): [record(1, 7.0, 7.0)],
    }
    joined = median_runs(runs)
    assert list(joined) == [("x (median of 3)", 10), ("y", 10)]
    first, second, third = joined[("x (median of 3)", 10)]
    assert (first["publish_seconds"], first["phases"], first["runs"]) == (2.0, {"bp": 1.0}, 3)
    assert (second["cpu_seconds"], second["peak_rss_mib"], second["phases"]) == (
        5.0,
        105.0,
        {"bp": 4.0},
    )
    assert "refused" in third
    assert joined[("y", 10)][0]["publish_seconds"] == 7.0

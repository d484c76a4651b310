"""The frequency detector's benchmark (``benchmarks.frequency_detector``) on planted series:
a model trained on one series finds the counterfeits of another, and every adversary's
discounted risk is reported beside the paper's."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.frequency_detector import _table, _transfer, evaluate
from tests.core.attacks.test_frequency import _planted


def test_a_model_trained_on_another_series_transfers() -> None:
    series, other = _planted(seed=1, clusters=10), _planted(seed=2, clusters=10)
    model = _transfer([_table(other)])
    releases = evaluate(series, _table(series), model, seed=0)
    assert [r["release_no"] for r in releases] == [1, 2, 3]
    assert releases[0]["auc"]["transfer"] is None  # release 1: no counterfeit
    for r in releases[1:]:
        assert r["auc"]["transfer"] > 0.9 and r["auc"]["rarity"] > 0.9
        assert set(r["risk"]) == {"paper", "blind", "detector", "transfer", "control", "perfect"}
        assert set(r["mixture"]) == {"blind", "logistic", "transfer"}
        for over, surely, worst in r["mixture"].values():
            assert 0 <= surely <= over and worst >= 0
        json.dumps(r, allow_nan=False)  # NaN-free, as written to the results file


def test_the_results_file_covers_every_series() -> None:
    results = Path(__file__).resolve().parents[2] / "benchmarks/results/frequency_detector.json"
    measured = json.loads(results.read_text(encoding="utf-8"))
    assert {(m["series"], m["seed"]) for m in measured} == {
        (name, seed) for name in ("B1 3x3000", "B1 5x3000", "B2 5x5000") for seed in (1, 2, 3)
    }

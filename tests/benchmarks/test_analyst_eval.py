"""``benchmarks.analyst_eval`` on a tiny BMS-WebView-1 series (2 releases
of 300 rows): every figure is there and sane, the doc section and the figure are written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.io.corpora import BMS_WEBVIEW_1, find_corpus, missing
from benchmarks.analyst_eval import NOTES, main
from benchmarks.soundness import JUDGE

pytestmark = pytest.mark.skipif(find_corpus(BMS_WEBVIEW_1) is None, reason=missing(BMS_WEBVIEW_1))


def test_a_tiny_series_is_read_through_the_reader(tmp_path: Path) -> None:
    doc = tmp_path / "evaluation.md"
    doc.write_text("# Evaluation\n\nintro\n\n## Appendix A\n\nkept\n", encoding="utf-8")
    args = ["--corpora", "1", "--sizes", "300", "--releases", "2", "--out", str(tmp_path / "r")]
    args += ["--results", str(tmp_path / "r.json"), "--doc", str(doc)]
    args += ["--figure", str(tmp_path / "f.png")]
    results = main(args)

    assert json.loads((tmp_path / "r.json").read_text())["meta"]["sizes"] == {"1": [300, 2]}
    series = {s["method"]: s for s in results["series"]}
    assert set(series) == {"anony", "sanony", "sanony-lemma4"}
    for s in series.values():
        assert s["failure"] is None
        assert [r["release_no"] for r in s["releases"]] == [1, 2]
        for r in s["releases"]:
            assert r["true_rows"] == 300 and r["rows"] == 300 + r["counterfeit_rows"]
            assert 0 <= r["in_clusters"] <= 1 and r["l1"] >= abs(r["net"])
            assert r["coverage"] == 1.0  # the count intervals hold (complete counterfeit count)
    # Anony publishes the true copies; lemma4's ratchet distorts at least as much as "least".
    assert all(r["l1"] == 0 for r in series["anony"]["releases"])
    for least, lemma4 in zip(
        series["sanony"]["releases"], series["sanony-lemma4"]["releases"], strict=True
    ):
        assert lemma4["l1"] >= least["l1"]
    if JUDGE.exists():
        assert series["sanony"]["judge_rows_over"] == 0
        assert series["sanony-lemma4"]["judge_rows_over"] == 0
    assert results["disassociation"]["1"]["refused"]  # the reader reads rows only

    text = doc.read_text(encoding="utf-8")
    assert text.index("intro") < text.index("## What analysts read")
    assert text.index("## What analysts read") < text.index("## Appendix A") < text.index("kept")
    assert "| BMS-1 | sanony |" in text
    assert (tmp_path / "f.png").stat().st_size > 1000
    # Rewriting replaces the section instead of adding a second one, keeping its notes.
    notes = f"{NOTES[0]}\nhand-written\n{NOTES[1]}"
    doc.write_text(text.replace("### Per series", notes + "\n\n### Per series"), "utf-8")
    main(args)
    text = doc.read_text(encoding="utf-8")
    assert text.count("## What analysts read") == 1 and text.count("hand-written") == 1
    assert text.index("hand-written") < text.index("### Per series") < text.index("\nkept\n")

"""The evaluation harness (design.md §10, ``benchmarks.evaluate``): formula 21, reconstructions,
and a tiny end-to-end run (1% of BMS-WebView-1 when the data folder is there, else a synthetic
corpus; 3 releases) whose JSON, markdown and PNG outputs must exist and be sane."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from app.core.model import PublishedCluster, PublishedRelease
from app.io.corpora import BMS_WEBVIEW_1, corpora_dir, find_corpus
from benchmarks.evaluate import main
from benchmarks.evaluation.config import method_params
from benchmarks.evaluation.figures import FIGURES
from benchmarks.evaluation.utility import inv_value_terms, published_supports, relative_error

CORE = ("anony", "sanony", "wong")


def test_relative_error_is_formula_21() -> None:
    assert relative_error(10.0, np.array([10.0, 30.0, 0.0])).tolist() == [0.0, 1.0, 2.0]
    assert relative_error(np.array([0.0, 0.0]), np.array([0.0, 4.0])).tolist() == [0.0, 2.0]


def _release() -> PublishedRelease:
    rows = [("a", "b"), ("a",), ("a", "b"), ("c",)]
    return PublishedRelease(
        release_no=1,
        clusters=[
            PublishedCluster("c1", rows, private_counts={"s": 1}, global_share={"s": 1}),
            PublishedCluster("c2", [("a",), ("b",)], private_counts={}, global_share={}),
        ],
        global_bag={"s": 3},
        population_rates={"s": 0.2},
    )


def test_published_supports_count_rows_and_reconstruct_private_terms() -> None:
    pairs = [("a", "b"), ("a", "s"), ("s", "t")]
    draws = published_supports(_release(), pairs, frozenset({"s", "t"}), 4000, "test")
    # Two non-private terms: counted on the rows, no randomness.
    assert draws[0].tolist() == [2.0] * 4000
    # (a, s): the 3 rows of c1 holding a each get s with N(s, C*)/N(C*) = 2/4; c2 has no s.
    assert draws[1].mean() == pytest.approx(1.5, abs=0.06)
    assert draws[1].max() <= 3
    # t is published nowhere: no reconstruction can hold it.
    assert draws[2].tolist() == [0.0] * 4000


def _corpus_args() -> tuple[list[str], bool]:
    if find_corpus(BMS_WEBVIEW_1) is not None:
        return [
            "--data-dir",
            str(corpora_dir()),
            "--corpora",
            "B1",
            "--default-sz",
            "1%",
            "--sz",
            "0.5%",
            "1%",
        ], True
    return [
        "--corpora",
        "SYN",
        "--synthetic-size",
        "3000",
        "--default-sz",
        "20%",
        "--sz",
        "10%",
        "20%",
    ], False


def test_quick_run_writes_sane_json_markdown_and_figures(tmp_path: Path) -> None:
    corpus, real = _corpus_args()
    out = tmp_path / "out"
    code = main(
        [
            "--quick",
            *corpus,
            "--sweeps",
            "sz",
            "--releases",
            "3",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    document = json.loads((out / "results.json").read_text())
    units = document["units"]
    failed = [u for u in units if u["status"] != "ok"]
    assert not [u for u in failed if u["method"] in CORE], failed
    assert code == (1 if failed else 0)
    assert {u["method"] for u in units} >= set(CORE)
    assert len({(u["sz"], u["rep"], u["r_th"]) for u in units}) == 2
    for unit in units:
        if unit["status"] != "ok":
            continue
        assert len(unit["releases"]) == 3
        assert unit["rows"] >= unit["true_rows"] > 0
        assert 0 <= unit["counterfeit_rate"] < 1
        assert unit["counterfeit_rate"] <= unit["worst_release_rate"] + 1e-12
        assert 0 <= unit["rows_at_risk"] <= unit["rows"]
        assert all(r["publish_seconds"] > 0 for r in unit["releases"])
        for band in unit["utility"].values():
            assert band["re"] is None or 0 <= band["re"] <= 2
    for unit in units:
        if unit["method"] == "sanony":
            assert unit["rows_at_risk"] == 0  # Theorem 1, checked by the independent assessment
        if unit["method"] == "anony":
            assert unit["counterfeits"] == 0
    if real:
        assert any(u["rows_at_risk"] > 0 for u in units if u["method"] == "anony")
        assert any(u["counterfeits"] > 0 for u in units if u["method"] == "sanony")
    assert len(document["summaries"]) == len(units)  # one seed: one summary per unit

    report = (out / "results.md").read_text()
    for heading in ("## Rows at risk", "## Counterfeit rate", "## Utility", "## Runtime"):
        assert heading in report
    for name in FIGURES.values():
        png = (out / name).read_bytes()
        assert png.startswith(b"\x89PNG") and len(png) > 10_000


def test_missing_corpus_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["--data-dir", str(tmp_path), "--corpora", "B1", "--out", str(tmp_path)])
    assert code == 2
    assert "corpus not found" in capsys.readouterr().err


def test_inv_values_are_decoded_before_reconstruction() -> None:
    release = PublishedRelease(
        release_no=1,
        clusters=[PublishedCluster("c1", [("a",)] * 4, private_counts={"s|t": 2, "": 2})],
        global_bag={},
        population_rates={},
    )
    draws = published_supports(
        release, [("s", "t"), ("a", "s")], frozenset({"s", "t"}), 4000, "inv", inv_value_terms
    )
    assert draws[0].mean() == pytest.approx(2.0, abs=0.08)
    assert draws[1].mean() == pytest.approx(2.0, abs=0.08)


def test_anony_r_th_reaches_sanony_and_kanony_only() -> None:
    assert method_params("sanony", 8.0, 10, 1).anony_r_th is None  # default: 3/8 of r_th
    assert method_params("sanony", 8.0, 10, 1, anony_r_th=2).anony_r_th == 2.0
    assert method_params("kanony", 8.0, 10, 1, anony_r_th=2).anony_r_th == 2.0
    assert method_params("sanony", 4.0, 10, 1, anony_r_th=6).anony_r_th == 4.0  # capped at r_th
    for method in ("anony", "inv", "wong", "scomp"):
        assert method_params(method, 8.0, 10, 1, anony_r_th=2).anony_r_th is None


def test_anony_r_th_option_is_run_recorded_and_labelled(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code = main(
        [
            "--corpora",
            "SYN",
            "--synthetic-size",
            "1500",
            "--default-sz",
            "20%",
            "--sweeps",
            "--releases",
            "2",
            "--seeds",
            "1",
            "--reconstructions",
            "2",
            "--methods",
            "anony",
            "sanony",
            "--experiments",
            "counterfeits",
            "utility",
            "--anony-r-th",
            "2",
            "--no-figures",
            "--no-progress",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    document = json.loads((out / "results.json").read_text())
    assert document["meta"]["anony_r_th"] == 2.0
    assert document["plan"]["anony_r_th"] == 2.0
    by_method = {u["method"]: u for u in document["units"]}
    assert by_method["sanony"]["anony_r_th"] == 2.0
    assert "anony_r_th" not in by_method["anony"]
    report = (out / "results.md").read_text()
    assert "sanony (anony_r_th 2)" in report
    assert "anony_r_th 2" in report.splitlines()[4]  # the run description


def test_anony_r_th_below_one_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--corpora", "SYN", "--anony-r-th", "0.5", "--no-figures"]) == 2
    assert "--anony-r-th" in capsys.readouterr().err

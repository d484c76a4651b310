"""``serialpub verify``: every row's risk from the public releases alone, judged by the test
oracle (an implementation apart from the production code), and a breach exits non-zero."""

from __future__ import annotations

import json
import random
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from app.cli import cli
from app.io.ledger import read_release
from tests.oracle.serial_risk import row_risks

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = [ROOT / "examples" / f"prison-{year}.dat" for year in (2022, 2023, 2024)]


#: Three releases: a term enters the default series with 5 copies (methods.md, horizon).
HORIZON: dict[str, dict[str, int]] = {"true_rows": {"horizon": 3}, "paper": {}}


def _publish(tmp_path: Path, r_th: float = 2, guarantee: str = "true_rows") -> Path:
    out = tmp_path / "releases"
    result = CliRunner().invoke(
        cli,
        [
            "publish-local",
            *map(str, EXAMPLES),
            "--private",
            "HIV,cancer,herpes",
            "--params",
            json.dumps(
                {"r_th": r_th, "cluster_size": 4, "guarantee": guarantee, **HORIZON[guarantee]}
            ),
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    return out


def _verify(*args: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(cli, ["verify", *args])
    stdout = result.stdout
    return result.exit_code, json.loads(stdout[: stdout.rindex("}") + 1]) if "{" in stdout else {}


def _oracle_max(directory: Path) -> dict[int, Fraction]:
    releases = [
        read_release(json.loads(f.read_text())) for f in sorted(directory.glob("release-*.json"))
    ]
    worst: dict[int, Fraction] = {r.release_no: Fraction(0) for r in releases}
    for key, (risk, _) in row_risks(releases).items():
        release_no = releases[key[0]].release_no
        worst[release_no] = max(worst[release_no], risk)
    return worst


def _understate_a_rate(out: Path) -> None:
    """Release 2 published with a private term's rate understated: every holder's lift grows."""
    target = out / "release-002.json"
    document = json.loads(target.read_text())
    term = next(t for t, rate in document["population_rates"].items() if rate > 0)
    document["population_rates"][term] /= 50
    target.write_text(json.dumps(document))


def test_verify_agrees_with_the_oracle_and_passes_a_sound_series(tmp_path: Path) -> None:
    out = _publish(tmp_path)
    code, report = _verify(str(out))
    assert code == 0
    assert report["rows_over_threshold"] == 0
    oracle = _oracle_max(out)
    assert [r["release_no"] for r in report["releases"]] == [1, 2, 3]
    for r in report["releases"]:
        assert r["max_serial_risk"] == pytest.approx(float(oracle[r["release_no"]]), rel=1e-9)
        assert r["max_serial_risk"] <= 2 + 1e-9


def test_releases_judged_in_several_processes_read_as_in_one(tmp_path: Path) -> None:
    out = _publish(tmp_path)
    _understate_a_rate(out)
    reports = {
        jobs: _verify(str(out), "--jobs", str(jobs), "--mixture-draws", "0") for jobs in (1, 2, 3)
    }
    code, one = reports[1]
    assert code == 1
    assert one["rows_over_threshold"] > 0
    oracle = _oracle_max(out)
    for r in one["releases"]:
        assert r["max_serial_risk"] == pytest.approx(float(oracle[r["release_no"]]), rel=1e-9)
    assert reports[2] == reports[1]
    assert reports[3] == reports[1]
    assert CliRunner().invoke(cli, ["verify", str(out), "--jobs", "0"]).exit_code == 2


def test_verify_exits_non_zero_on_a_breach(tmp_path: Path) -> None:
    out = _publish(tmp_path)
    _understate_a_rate(out)
    code, report = _verify(str(out))
    assert code == 1
    assert report["rows_over_threshold"] > 0
    assert any(r["rows_over_threshold"] for r in report["releases"] if r["release_no"] == 2)
    # A stricter threshold than the releases' own is the auditor's to choose.
    code, _ = _verify(str(_publish(tmp_path / "again")), "--r-th", "1")
    assert code == 1


def test_verify_compares_the_service_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From a series URL: releases through the API, and the service's ``/risk`` compared."""
    from app import cli_verify
    from app.core.risk.assess import assess_series

    out = _publish(tmp_path)
    documents = [json.loads(f.read_text()) for f in sorted(out.glob("release-*.json"))]
    honest = [
        {
            "release_no": r.release_no,
            "max_serial_risk": r.max_serial_risk,
            "rows_over_threshold": r.rows_over_threshold,
        }
        for r in assess_series([read_release(d) for d in documents], 2.0, with_rows=False)
    ]
    base = "http://service/v1/series/s"
    served: dict[str, Any] = {
        f"{base}/releases": [{"release_no": d["release_no"]} for d in documents],
        f"{base}/risk": honest,
    }
    served.update({f"{base}/releases/{d['release_no']}": d for d in documents})
    seen_keys = set()

    def fake_get(url: str, key: str | None) -> Any:
        seen_keys.add(key)
        return served[url]

    monkeypatch.setattr(cli_verify, "_get", fake_get)
    code, report = _verify(base, "--key", "k")
    assert code == 0 and report["service_compared"] and not report["disagreements"]
    assert seen_keys == {"k"}
    # A service that under-reports is caught.
    served[f"{base}/risk"] = [{**r, "max_serial_risk": r["max_serial_risk"] / 2} for r in honest]
    code, report = _verify(base, "--key", "k")
    assert code == 3 and len(report["disagreements"]) == 3


def _said(output: str) -> str:
    """The error message out of typer's box, on one line."""
    return " ".join(output.replace("│", " ").split())


def test_verify_names_bad_input(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["verify", str(tmp_path)])
    assert result.exit_code == 2
    assert "no release-NNN.json" in _said(result.output)
    (tmp_path / "release-002.json").write_text(
        json.dumps(
            {
                "release_no": 2,
                "params": {"r_th": 2},
                "clusters": [],
                "global_bag": {},
                "population_rates": {},
            }
        )
    )
    result = CliRunner().invoke(cli, ["verify", str(tmp_path)])
    assert result.exit_code == 2
    assert "without gaps" in _said(result.output)


def test_random_shuffles_do_not_change_the_verdict(tmp_path: Path) -> None:
    """Row order inside a cluster carries nothing the risk reads: shuffled rows, same risk."""
    out = _publish(tmp_path)
    _, before = _verify(str(out))
    rng = random.Random(0)
    for f in out.glob("release-*.json"):
        document = json.loads(f.read_text())
        for cluster in document["clusters"]:
            rng.shuffle(cluster["rows"])
        f.write_text(json.dumps(document))
    _, after = _verify(str(out))
    # The frequency detector's adversaries break ties (and the blind one picks) at random by
    # position: their figures may move; the paper's risk may not.
    before.pop("frequency")
    after.pop("frequency")
    assert before == after


def test_verify_reports_the_frequency_detector(tmp_path: Path) -> None:
    out = _publish(tmp_path)
    code, report = _verify(str(out))
    frequency = report["frequency"]
    assert code == 0 and frequency["score"] == "rarity"
    # No ledger: the detector-aware risk (public data only), no AUC, no perfect detector.
    assert set(frequency["risk"]) == {"blind", "detector"}
    # The Bayesian adversary of the published counts alone (equal odds).
    assert set(frequency["mixture"]) == {"blind"}
    assert frequency["detection"] == []
    releases = [r["release_no"] for r in report["releases"]]
    for risks in [*frequency["risk"].values(), *frequency["mixture"].values()]:
        assert [r["release_no"] for r in risks] == releases
    for r, release in zip(frequency["mixture"]["blind"], report["releases"], strict=True):
        assert r["draws"] == 16 and 0 <= r["rows_surely_over"] <= r["rows_over_threshold"]
        # Each draw keeps all but K rows, and every row a draw kept is scored.
        assert release["n_rows"] - r["counterfeits"] <= r["rows"] <= release["n_rows"]
    ledgers = tmp_path / "releases.private"  # publish-local's, beside its public folder
    result = CliRunner().invoke(cli, ["verify", str(out), "--ledger", str(ledgers)])
    assert result.exit_code == 0, result.output
    assert "discounted by detector:" in result.stderr
    assert "weighed by blind (16 draws):" in result.stderr
    assert "frequency 100.0%" in result.stderr  # progress of the draws
    frequency = json.loads(result.stdout[: result.stdout.rindex("}") + 1])["frequency"]
    assert set(frequency["risk"]) == {"blind", "detector", "control", "perfect"}
    # The logistic detector's odds need two clusters with a counterfeit to cross-validate,
    # which this small series may lack (tests/core/attacks/test_frequency.py has them).
    assert set(frequency["mixture"]) in ({"blind", "logistic"}, {"blind"})
    assert [d["release_no"] for d in frequency["detection"]] == releases
    assert {"rarity", "logistic", "logistic_with_counts"} <= set(frequency["detection"][0]["auc"])
    # No draw, no Bayesian adversary; a negative count is refused.
    result = CliRunner().invoke(cli, ["verify", str(out), "--mixture-draws", "0"])
    assert result.exit_code == 0 and "weighed by" not in result.stderr
    assert "mixture" not in json.loads(result.stdout[: result.stdout.rindex("}") + 1])["frequency"]
    assert CliRunner().invoke(cli, ["verify", str(out), "--mixture-draws", "-1"]).exit_code == 2


def test_verify_refuses_a_ledger_of_another_series(tmp_path: Path) -> None:
    out = _publish(tmp_path)
    private = tmp_path / "releases.private"
    (private / "ledger-001.json").write_text((private / "ledger-003.json").read_text())
    result = CliRunner().invoke(cli, ["verify", str(out), "--ledger", str(private)])
    assert result.exit_code == 2 and "not the ledger of release 1" in result.output


def test_verify_reports_what_the_published_total_gives_away(tmp_path: Path) -> None:
    # Written from the public documents and the oracle's risks: φ = M / (M - R) with R the
    # total less the clusters' counts and M the rows less those counts; a row it puts over
    # r_th is a breach read from public data alone (exit 1). The paper's guarantee: the
    # default publishes no counterfeit, hence no total to read.
    out = _publish(tmp_path, guarantee="paper")
    code, report = _verify(str(out))
    assert code == (1 if report["public_breaches"] else 0)
    assert all(b["adversary"] != "paper" for b in report["public_breaches"])
    oracle = _oracle_max(out)
    seen = 0
    for r in report["releases"]:
        document = json.loads((out / f"release-{r['release_no']:03d}.json").read_text())
        counted = sum(c["counterfeits"] for c in document["clusters"])
        rows = sum(len(c["rows"]) for c in document["clusters"])
        unattributed = (document["counterfeit_rows"] or 0) - counted
        if unattributed <= 0:
            assert r["published_total"] is None
            continue
        seen += 1
        factor = Fraction(rows - counted, rows - counted - unattributed)
        exposure = r["published_total"]
        assert exposure["unattributed"] == unattributed
        assert exposure["factor"] == pytest.approx(float(factor), rel=1e-12)
        worst = oracle[r["release_no"]] * factor
        assert exposure["max_serial_risk"] == pytest.approx(float(worst), rel=1e-9)
    assert seen  # the example's releases do publish counterfeits beyond the clusters' counts


def test_any_public_adversary_over_r_th_is_a_breach() -> None:
    """The exit status reads every adversary computed from the public files alone: the
    paper's, the published total's estimate, removal by rarity or at random, and the
    Bayesian adversary of the counts (rows beyond its noise); never the ledger's."""
    from app.cli_verify import public_breaches

    report = [
        {"release_no": 1, "rows_over_threshold": 0, "published_total": None},
        {
            "release_no": 2,
            "rows_over_threshold": 0,
            "published_total": {"rows_over_threshold": 3, "max_serial_risk": 8.4},
        },
    ]
    frequency = {
        "risk": {
            "detector": [{"release_no": 1, "rows_over_threshold": 0}],
            "blind": [{"release_no": 2, "rows_over_threshold": 0}],
            "perfect": [{"release_no": 2, "rows_over_threshold": 40}],
        },
        "mixture": {
            "blind": [
                {"release_no": 1, "rows_over_threshold": 9, "rows_surely_over": 0},
                {"release_no": 2, "rows_over_threshold": 1094, "rows_surely_over": 1094},
            ],
            "logistic": [{"release_no": 2, "rows_over_threshold": 5, "rows_surely_over": 5}],
        },
    }
    found = {(b["adversary"], b["release_no"]) for b in public_breaches(report, frequency)}
    assert found == {("published_total", 2), ("weighed_by_blind", 2)}


def test_a_true_rows_series_verifies_from_its_public_files_alone(tmp_path: Path) -> None:
    code, report = _verify(str(_publish(tmp_path)), "--mixture-draws", "4")
    assert code == 0 and report["public_breaches"] == []

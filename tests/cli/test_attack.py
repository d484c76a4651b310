"""``serialpub attack RAW... --published DIR``: the audit of a publication job, locally."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import cli
from tests.core.attacks.topics import world

RUNNER = CliRunner()


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two snapshots (FIMI, no individuals) published with publish-local, under the paper's
    guarantee: the attack scores counterfeits too, and the default places none."""
    root = tmp_path_factory.mktemp("attack")
    for number in (1, 2):
        lines = "".join(" ".join(sorted(t.terms)) + "\n" for t in world(200, number))
        (root / f"y{number}.dat").write_text(lines, encoding="utf-8")
    result = RUNNER.invoke(
        cli,
        [
            "publish-local",
            str(root / "y1.dat"),
            str(root / "y2.dat"),
            "--private",
            "hiv,parole",
            "--params",
            '{"cluster_size": 4, "guarantee": "paper"}',
            "--out",
            str(root / "out"),
        ],
    )
    assert result.exit_code == 0, result.output
    return root


def _attack(root: Path, *extra: str) -> tuple[int, str, str]:
    result = RUNNER.invoke(
        cli,
        [
            "attack",
            str(root / "y1.dat"),
            str(root / "y2.dat"),
            "--published",
            str(root / "out"),
            *extra,
        ],
    )
    return result.exit_code, result.stdout, result.stderr


def test_attack_prints_a_report_per_release(published: Path) -> None:
    code, out, err = _attack(published, "--selection", "aba,mra")
    assert code == 0, err
    reports = json.loads(out)["releases"]
    assert [r["release_no"] for r in reports] == [1, 2]
    for report in reports:
        assert report["status"] == "done" and report["tracing"] == "content"
        assert sorted(report["private_copies"]) == ["aba-ngd", "mra-ngd", "random"]
        # Every ledger up to the release is at hand: the perfect detector too.
        risk = report["frequency"]["risk"]
        assert set(risk) == {"blind", "detector", "control", "perfect"}
        assert risk["perfect"]["release_no"] == report["release_no"]
        mixture = report["frequency"]["mixture"]
        assert set(mixture) == {"blind", "logistic"} or set(mixture) == {"blind"}
        assert mixture["blind"]["release_no"] == report["release_no"]
    # The default background: the public rows up to each release.
    assert reports[0]["background_transactions"] == reports[0]["rows"]
    assert reports[1]["background_transactions"] == reports[0]["rows"] + reports[1]["rows"]
    assert "coherence 100.0%" in err  # progress on stderr, the JSON alone on stdout
    assert "frequency 100.0%" in err  # the Bayesian adversary's draws too


def test_attack_with_a_background_file(published: Path, tmp_path: Path) -> None:
    background = tmp_path / "world.dat"
    background.write_text(
        "".join(" ".join(sorted(t.terms)) + "\n" for t in world(300, 7)), encoding="utf-8"
    )
    code, out, err = _attack(published, "--background", str(background))
    assert code == 0, err
    reports = json.loads(out)["releases"]
    assert all(r["background_transactions"] == 300 for r in reports)
    # This world's private terms go with their topic: the attack beats random placement.
    best, baseline = reports[1]["best"], reports[1]["private_copies"]["random"]
    assert best["share"] > baseline["random_expected"]


def test_attack_needs_the_ledgers(published: Path, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shutil.copytree(published, shared)
    assert not (shared / "out" / "private").exists()  # the public folder holds no ledger
    shutil.rmtree(shared / "out.private")  # a directory of public files only
    code, _, err = _attack(shared)
    assert code == 2 and "ledger-001.json is missing" in err
    # Ledgers kept elsewhere are named with --ledger-dir.
    shutil.copytree(published / "out.private", shared / "vault")
    code, out, err = _attack(shared, "--selection", "aba", "--ledger-dir", str(shared / "vault"))
    assert code == 0, err
    assert len(json.loads(out)["releases"]) == 2


def test_a_bad_setting_is_refused(published: Path) -> None:
    code, _, err = _attack(published, "--scoring", "bert")
    assert code == 2 and "scoring" in err


def test_attack_on_disassociated_releases(tmp_path: Path) -> None:
    """publish-local keeps no ground truth for chunks; the attack disassociates the raw file
    again (nothing is drawn at random) and refuses a file that is not the release's."""
    for number in (1, 2):
        lines = "".join(" ".join(sorted(t.terms)) + "\n" for t in world(120, number))
        (tmp_path / f"y{number}.dat").write_text(lines, encoding="utf-8")
    published = RUNNER.invoke(
        cli,
        [
            "publish-local",
            str(tmp_path / "y1.dat"),
            str(tmp_path / "y2.dat"),
            "--method",
            "disassociation",
            "--private",
            "hiv",
            "--params",
            '{"k": 2, "max_cluster_size": 10}',
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert published.exit_code == 0, published.output
    code, out, err = _attack(tmp_path, "--selection", "mra")
    assert code == 0, err
    reports = json.loads(out)["releases"]
    assert [r["status"] for r in reports] == ["done", "done"]
    assert set(reports[1]["reassociation"]) == {"mra-ngd", "mra+update-ngd", "random"}
    assert reports[1]["disassociation"]["records"] == reports[1]["rows"] == 120
    # The snapshots swapped: neither gives its release's chunks back.
    swapped = RUNNER.invoke(
        cli,
        [
            "attack",
            str(tmp_path / "y2.dat"),
            str(tmp_path / "y1.dat"),
            "--published",
            str(tmp_path / "out"),
        ],
    )
    message = " ".join(swapped.stderr.replace("│", " ").split())  # rich wraps it in a box
    assert swapped.exit_code == 2 and "is not the snapshot of release 1" in message

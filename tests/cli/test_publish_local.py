"""``serialpub publish-local``: where it writes the public files and the ledgers, what it
refuses to mix, and an exit status that says what ``verify`` says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from app.cli import cli
from app.settings import get_settings

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = [str(ROOT / "examples" / f"prison-{year}.dat") for year in (2022, 2023, 2024)]
PRIVATE = ["--private", "HIV,cancer,herpes"]


#: Wide enough that typer's error box does not cut a path in two.
RUNNER = CliRunner(env={"COLUMNS": "1000"})


def _publish(*args: str, corpora: list[str] = EXAMPLES, params: str = '{"r_th": 2}') -> Result:
    return RUNNER.invoke(cli, ["publish-local", *corpora, *PRIVATE, "--params", params, *args])


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_the_ledgers_are_written_beside_the_public_folder_never_inside(tmp_path: Path) -> None:
    out = tmp_path / "releases"
    result = _publish("--out", str(out))
    assert result.exit_code == 0, result.output
    # The public folder holds public files only: sharing it shares no ledger.
    assert _files(out) == [
        "release-001.json",
        "release-002.json",
        "release-003.json",
        "report.json",
        "risk.json",
    ]
    ledgers = tmp_path / "releases.private"
    assert _files(ledgers) == ["ledger-001.json", "ledger-002.json", "ledger-003.json"]
    assert "randomness" in json.loads((ledgers / "ledger-001.json").read_text())
    # The command ends by saying where the ledgers went and that they are not to be shared.
    said = result.stderr.strip().splitlines()
    assert any(str(ledgers) in line and "never publish" in line for line in said[-3:]), said
    # verify and attack find them there.
    verified = RUNNER.invoke(cli, ["verify", str(out), "--ledger", str(ledgers)])
    assert verified.exit_code == 0, verified.output
    assert "counterfeit AUC" in verified.stderr or "discounted by perfect" in verified.stderr


def test_a_ledger_folder_of_ones_choice_but_not_inside_the_public_one(tmp_path: Path) -> None:
    out, ledgers = tmp_path / "public", tmp_path / "vault" / "series"
    assert _publish("--out", str(out), "--ledger-dir", str(ledgers)).exit_code == 0
    assert len(list(ledgers.glob("ledger-*.json"))) == 3
    assert not list(out.rglob("ledger-*"))
    for inside in (out / "private", out):
        refused = _publish("--out", str(out), "--ledger-dir", str(inside), "--replace")
        assert refused.exit_code == 2
        assert "--ledger-dir" in refused.output and "inside" in refused.output


def test_a_folder_holding_an_earlier_run_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "releases"
    assert _publish("--out", str(out)).exit_code == 0
    before = {
        p: p.read_bytes() for p in [*out.iterdir(), *(tmp_path / "releases.private").iterdir()]
    }
    # A shorter series into the same folder would leave release 3 of the first run beside it.
    again = _publish("--out", str(out), corpora=EXAMPLES[:2])
    assert again.exit_code == 2
    assert "not empty" in again.output and "--replace" in again.output
    assert {p: p.read_bytes() for p in before} == before  # nothing touched
    # The ledgers' folder alone is enough to refuse (their run's public files were moved).
    for f in out.iterdir():
        f.unlink()
    again = _publish("--out", str(out), corpora=EXAMPLES[:2])
    assert again.exit_code == 2 and "releases.private" in again.output


def test_replace_empties_both_folders_first(tmp_path: Path) -> None:
    out = tmp_path / "releases"
    assert _publish("--out", str(out)).exit_code == 0
    # The layout of earlier versions: the ledgers under the public folder's private/.
    (out / "private").mkdir()
    (out / "private" / "ledger-003.json").write_text("{}")
    replaced = _publish("--out", str(out), "--replace", corpora=EXAMPLES[:2])
    assert replaced.exit_code == 0, replaced.output
    assert _files(out) == ["release-001.json", "release-002.json", "report.json", "risk.json"]
    assert _files(tmp_path / "releases.private") == ["ledger-001.json", "ledger-002.json"]
    verified = RUNNER.invoke(cli, ["verify", str(out)])
    assert verified.exit_code == 0
    assert [
        r["release_no"]
        for r in json.loads(verified.stdout[: verified.stdout.rindex("}") + 1])["releases"]
    ] == [1, 2]


def test_replace_empties_only_a_folder_of_publish_local_s_own_files(tmp_path: Path) -> None:
    out = tmp_path / "work"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    refused = _publish("--out", str(out), "--replace")
    assert refused.exit_code == 2 and "notes.txt" in refused.output
    assert (out / "notes.txt").read_text() == "mine" and _files(out) == ["notes.txt"]


def test_a_method_without_a_serial_claim_says_what_verify_says(tmp_path: Path) -> None:
    out = tmp_path / "anony"
    result = _publish("--out", str(out), "--method", "anony", params='{"r_th": 2}')
    verified = RUNNER.invoke(cli, ["verify", str(out), "--mixture-draws", "0"])
    report = json.loads(verified.stdout[: verified.stdout.rindex("}") + 1])
    over = report["rows_over_threshold"]
    assert over > 0 and verified.exit_code == 1  # the example breaches r_th 2 under Anony
    assert result.exit_code == 0, result.output  # what was asked for, and said so
    lines = result.stderr.splitlines()
    assert any("anony makes no serial claim" in line and "composition" in line for line in lines)
    assert f"{over} rows over r_th" in result.stderr
    for r in report["releases"]:
        if r["rows_over_threshold"]:
            assert f"release {r['release_no']}: {r['rows_over_threshold']} of" in result.stderr
    # The public files and ledgers are written all the same: they are what verify judged.
    assert len(list(out.glob("release-*.json"))) == 3
    # Sanony on the same series keeps every row within r_th and exits 0.
    sanony = _publish("--out", str(tmp_path / "sanony"), params='{"r_th": 2}')
    assert sanony.exit_code == 0, sanony.output


def test_production_refuses_a_publisher_seed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SERIALPUB_ENV", "production")
    monkeypatch.setenv("DATABASE_URL", "postgresql+psycopg://serialpub@db/serialpub")
    get_settings.cache_clear()
    try:
        refused = _publish("--out", str(tmp_path / "r"), params='{"r_th": 2, "seed": 1}')
        assert refused.exit_code == 2 and "params.seed" in refused.output
        assert not (tmp_path / "r").exists()
        monkeypatch.setenv("SERIALPUB_ALLOW_PUBLISHER_SEED", "true")
        get_settings.cache_clear()
        allowed = _publish("--out", str(tmp_path / "r"), params='{"r_th": 2, "seed": 1}')
        assert allowed.exit_code == 0, allowed.output
    finally:
        get_settings.cache_clear()

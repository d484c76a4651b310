"""Schemathesis over every operation, in its own process
(:mod:`tests.support.fuzz`): a few examples per operation in the default run;
``SERIALPUB_FUZZ_EXAMPLES=40`` for the full run (about five minutes on two cores)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.database import ROOT

pytestmark = [pytest.mark.db, pytest.mark.slow]


def test_schemathesis_finds_nothing() -> None:
    examples = os.environ.get("SERIALPUB_FUZZ_EXAMPLES", "3")
    run = subprocess.run(
        [sys.executable, "-m", "tests.support.fuzz", "--max-examples", examples, "--seed", "7"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr[-20_000:]
    assert run.stdout.count(": ok") >= 18, run.stdout

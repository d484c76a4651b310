"""The docstring examples of the attacks package run as tests."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "app.core.attacks.anony",
    "app.core.attacks.anony_measures",
    "app.core.attacks.release_audit",
    "app.core.attacks.scoring",
    "app.core.attacks.selection",
    "app.core.attacks.settings",
    "app.core.attacks.tracing",
    "app.core.attacks.vpa",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0

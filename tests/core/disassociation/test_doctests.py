"""The docstring examples of the disassociation package run as tests."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "app.core.disassociation.disassociate",
    "app.core.disassociation.horizontal",
    "app.core.disassociation.loss",
    "app.core.disassociation.refining",
    "app.core.disassociation.vertical",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0

"""The version Serialpub reports (``serialpub --version``, the OpenAPI document): the installed
distribution's, or from a checkout that was never installed (``python -m app`` with the
repository on the path) its ``pyproject.toml``'s. CHANGELOG.md's newest entry names the same
version (``tests/test_changelog.py``)."""

from __future__ import annotations

import tomllib
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

__all__ = ["serialpub_version"]

_PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


@cache
def serialpub_version() -> str:
    # An editable install's metadata keeps the version it was installed at; the checkout's
    # pyproject.toml, when there is one, is the one that moved.
    if _PYPROJECT.is_file():
        project = tomllib.loads(_PYPROJECT.read_text(encoding="utf-8"))["project"]
        if project.get("name") == "serialpub":
            return str(project["version"])
    try:
        return version("serialpub")
    except PackageNotFoundError:
        return "unknown"

"""The tests are laid out like the packages they test.

A test module in ``tests/core/<sub>/`` tests the package ``app/core/<sub>/`` (likewise
``tests/methods/<name>/`` and ``app/methods/<name>/``); a module directly in ``tests/core/``
tests a module of ``app/core/`` itself, or the pipeline across its packages. Every folder of
tests is a package (``__init__.py``): pytest imports test modules by their dotted name, and two
folders may each hold a ``test_anony.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import app

TESTS = Path(__file__).resolve().parent
APP = Path(app.__file__).resolve().parent
#: The folders of tests that mirror a package of app/, folder for folder.
MIRRORED = ("core", "methods", "db", "api", "jobs", "services", "io", "analysis", "web")


def misplaced(tests: Path, app_dir: Path, top: str) -> list[str]:
    """Every test module under ``tests/<top>/`` whose folder is no package of ``app/<top>/``."""
    root = tests / top
    found = []
    for module in sorted(root.rglob("test_*.py")):
        folder = module.parent.relative_to(root)
        package = app_dir / top / folder
        if not (package / "__init__.py").is_file():
            found.append(
                f"{module.relative_to(tests.parent)}: app/{(Path(top) / folder).as_posix()} "
                "is no package"
            )
    return found


def not_packages(tests: Path, top: str) -> list[str]:
    """Every folder under ``tests/<top>/`` (itself included) holding Python without ``__init__``."""
    root = tests / top
    folders = {path.parent for path in root.rglob("*.py")} | {root}
    return [
        f"{folder.relative_to(tests.parent)}: no __init__.py"
        for folder in sorted(folders)
        if "__pycache__" not in folder.parts and not (folder / "__init__.py").is_file()
    ]


@pytest.mark.parametrize("top", MIRRORED)
def test_every_test_module_sits_in_the_folder_of_the_package_it_tests(top: str) -> None:
    assert sorted((TESTS / top).rglob("test_*.py")), f"no tests under tests/{top}"
    wrong = misplaced(TESTS, APP, top)
    assert wrong == [], "tests/ does not mirror app/:\n" + "\n".join(wrong)


@pytest.mark.parametrize("top", MIRRORED)
def test_every_folder_of_tests_is_a_package(top: str) -> None:
    wrong = not_packages(TESTS, top)
    assert wrong == [], "\n".join(wrong)


def test_the_core_has_subpackages_and_their_tests_mirror_them() -> None:
    """The check has something to check: the core's subpackages have folders of tests."""
    mirrored = {path.parent.name for path in (TESTS / "core").glob("*/test_*.py")}
    packages = {path.parent.name for path in (APP / "core").glob("*/__init__.py")}
    assert {"anonymisation", "perturbation", "risk", "variants"} <= mirrored <= packages


def test_a_misplaced_module_and_a_missing_init_are_found(tmp_path: Path) -> None:
    """The checks fail on a misplaced file: a misspelt folder, a folder app/ lacks, no package."""
    for package in ("app/core", "app/core/risk", "app/core/variants"):
        (tmp_path / package).mkdir(parents=True, exist_ok=True)
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "app/core/notes").mkdir()  # a folder, not a package
    for module in (
        "tests/core/test_errors.py",
        "tests/core/risk/test_risk.py",
        "tests/core/variants/test_wong.py",
        "tests/core/riks/test_posterior.py",
        "tests/core/risk/state/test_state.py",
        "tests/core/notes/test_notes.py",
    ):
        (tmp_path / module).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / module).write_text("")
    for folder in ("tests/core", "tests/core/risk", "tests/core/riks", "tests/core/notes"):
        (tmp_path / folder / "__init__.py").write_text("")

    assert misplaced(tmp_path / "tests", tmp_path / "app", "core") == [
        "tests/core/notes/test_notes.py: app/core/notes is no package",
        "tests/core/riks/test_posterior.py: app/core/riks is no package",
        "tests/core/risk/state/test_state.py: app/core/risk/state is no package",
    ]
    assert not_packages(tmp_path / "tests", "core") == [
        "tests/core/risk/state: no __init__.py",
        "tests/core/variants: no __init__.py",
    ]

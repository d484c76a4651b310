"""``python -m benchmarks`` lists every benchmark, each with a command that names it and only
options it takes."""

from __future__ import annotations

import re
from pathlib import Path

import benchmarks
from benchmarks.__main__ import EXPERIMENTS, HELPERS, MAINTAINED, listing

ROOT = Path(benchmarks.__file__).parent


def _scripts(folder: Path, prefix: str = "") -> set[str]:
    return {prefix + p.stem for p in folder.glob("*.py") if not p.stem.startswith("__")}


def test_every_script_is_listed_once() -> None:
    listed = [bench.module for bench in (*MAINTAINED, *EXPERIMENTS)]
    assert len(listed) == len(set(listed))
    on_disk = _scripts(ROOT) | _scripts(ROOT / "experiments", "experiments.")
    assert set(listed) | set(HELPERS) == on_disk


def test_each_command_runs_its_module_with_options_it_takes() -> None:
    for bench in (*MAINTAINED, *EXPERIMENTS):
        path = ROOT / (bench.module.replace(".", "/") + ".py")
        by_module = f"python -m benchmarks.{bench.module}"
        by_path = f"python benchmarks/{bench.module.replace('.', '/')}.py"
        assert bench.command.startswith((by_module + " ", by_path + " ")) or bench.command in (
            by_module,
            by_path,
        ), bench.command
        source = path.read_text(encoding="utf-8")
        for option in re.findall(r"(?<!\S)(--[a-z][a-z-]*)", bench.command):
            assert f'"{option}"' in source, f"{bench.module} takes no {option}"


def test_the_listing_names_each_command() -> None:
    text = listing()
    assert all(bench.command in text for bench in (*MAINTAINED, *EXPERIMENTS))

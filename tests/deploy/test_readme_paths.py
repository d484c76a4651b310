"""Every file README.md's commands name is in a fresh clone, lies outside it where the text says
so (``../shared/``), or is written by an earlier command of the same block (``--out DIR``)."""

from __future__ import annotations

import re

from tests.support.database import ROOT

_BLOCK = re.compile(r"```bash\n(.*?)```", re.S)
_FILE = re.compile(r"@?([\w./$-]+\.(?:dat|txt|json|csv|py))\b")
_OUT = re.compile(r"--out\s+(\S+)")


def test_readme_commands_name_only_files_a_clone_has() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    missing = []
    for block in _BLOCK.findall(readme):
        written: list[str] = []
        for full in block.splitlines():
            line = re.split(r"\s#", full, maxsplit=1)[0]  # not the comment's words
            for path in _FILE.findall(line):
                path = path.replace("$year", "2022")
                if path.startswith("../shared/") or any(
                    path.startswith(d.rstrip("/") + "/") for d in written
                ):
                    continue
                if not (ROOT / path).exists():
                    missing.append(path)
            written += _OUT.findall(line)
    assert not missing, f"README.md names files a fresh clone lacks: {missing}"

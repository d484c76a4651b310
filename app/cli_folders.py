"""The two folders ``serialpub publish-local`` writes: the public one and the ledgers'.

The public folder (``--out DIR``) holds what may be shared: ``release-NNN.json``,
``risk.json``, ``report.json``. The ledgers (which rows are counterfeits, whose row is whose,
the secret each release's random choices came from) go to a folder of their own,
``--ledger-dir``, by default ``DIR.private`` beside it
(:func:`app.io.ledger.default_ledger_dir`) and never inside it: copying, archiving or
``git add``-ing the public folder must not take them along.

A folder that already holds something is refused: a series written over an earlier run kept
that run's later releases (and ledgers) beside the new ones, and ``verify`` then read a mixed
series. ``--replace`` empties both folders first, and only folders of ``publish-local``'s own
files, so that ``--out . --replace`` cannot delete anything else.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import typer

from app.io.ledger import default_ledger_dir

__all__ = ["OutputFolders", "plan_folders"]

#: What ``publish-local`` writes into each folder (``--replace`` removes these only).
PUBLIC_FILES = ("release-[0-9]*.json", "risk.json", "report.json")
LEDGER_FILES = ("ledger-[0-9]*.json",)
#: Earlier versions wrote the ledgers under the public folder's ``private/``.
LEGACY_LEDGERS = "private"


@dataclass(frozen=True, slots=True)
class OutputFolders:
    """Where one run writes: checked by :func:`plan_folders`, made by :meth:`make`."""

    public: Path
    ledgers: Path
    replace: bool

    def make(self) -> None:
        """Empty both folders (with ``--replace``) and create them."""
        if self.replace:
            for entry in [*_entries(self.public), *_entries(self.ledgers)]:
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry)
                else:
                    entry.unlink()
        self.public.mkdir(parents=True, exist_ok=True)
        self.ledgers.mkdir(parents=True, exist_ok=True)


def plan_folders(out: Path, ledger_dir: Path | None, replace: bool) -> OutputFolders:
    """The run's folders, or ``typer.BadParameter`` (exit 2, nothing touched) when the
    ledgers' folder is inside the public one, either is not a folder, or either holds
    something (without ``replace``) or something ``publish-local`` did not write (with it)."""
    try:
        ledgers = ledger_dir if ledger_dir is not None else default_ledger_dir(out)
    except ValueError:  # "/" has no sibling
        raise typer.BadParameter(f"{out} has no folder beside it", param_hint="--out") from None
    if _inside(ledgers, out):
        raise typer.BadParameter(
            f"{ledgers} is inside the public folder {out}, where the ledgers would be shared "
            "with the releases; choose a folder outside it",
            param_hint="--ledger-dir",
        )
    for folder, hint in ((out, "--out"), (ledgers, "--ledger-dir")):
        if folder.exists() and not folder.is_dir():
            raise typer.BadParameter(f"{folder} is not a folder", param_hint=hint)
        held = _entries(folder)
        if held and not replace:
            raise typer.BadParameter(
                f"{folder} is not empty ({_listing(held)}): publish-local writes a series into "
                "empty folders, so that no earlier run's releases are mixed with it; choose an "
                "empty folder, or pass --replace to empty this one and the ledgers' first",
                param_hint=hint,
            )
        foreign = [entry for entry in held if not _written_here(entry, folder == ledgers)]
        if foreign:
            raise typer.BadParameter(
                f"{folder} holds files publish-local does not write ({_listing(foreign)}); "
                "--replace empties only folders of its own output: move them, or choose "
                "another folder",
                param_hint="--replace",
            )
    return OutputFolders(out, ledgers, replace)


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.iterdir()) if folder.is_dir() else []


def _inside(path: Path, folder: Path) -> bool:
    path, folder = path.resolve(), folder.resolve()
    return path == folder or folder in path.parents


def _written_here(entry: Path, ledgers: bool) -> bool:
    """Whether ``entry`` is one of the files ``publish-local`` writes into that folder (or,
    in a public folder, an earlier version's ``private/`` of ledgers)."""
    if entry.is_file():
        return any(entry.match(p) for p in (LEDGER_FILES if ledgers else PUBLIC_FILES))
    if not ledgers and entry.name == LEGACY_LEDGERS and entry.is_dir():
        return all(child.is_file() and child.match(LEDGER_FILES[0]) for child in entry.iterdir())
    return False


def _listing(entries: list[Path], shown: int = 3) -> str:
    names = ", ".join(entry.name for entry in entries[:shown])
    return names if len(entries) <= shown else f"{names}, … {len(entries)} entries"

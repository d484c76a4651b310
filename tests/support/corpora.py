"""Where the benchmark corpora (BMS-WebView-1 and -2, FIMI ``.dat`` files) are found.

They are not in the repository (read-only shared data). Tests look in ``SERIALPUB_CORPUS_DIR``
when set, else in ``shared/data`` beside the checkout or beside any directory above it (the
layout ``../shared/data`` of README.md), and skip naming where they looked.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["corpus_path", "searched"]

_ROOT = Path(__file__).resolve().parents[2]


def _candidates() -> list[Path]:
    configured = os.environ.get("SERIALPUB_CORPUS_DIR")
    if configured:
        return [Path(configured).expanduser()]
    return [parent / "shared" / "data" for parent in _ROOT.parents]


def corpus_path(name: str) -> Path | None:
    """The corpus file ``name`` (``bms-webview-1.dat``), or ``None`` when absent."""
    for directory in _candidates():
        if (directory / name).is_file():
            return directory / name
    return None


def searched(name: str) -> str:
    """A skip reason naming the places looked at."""
    places = ", ".join(str(d / name) for d in _candidates()[:3])
    return (
        f"benchmark corpus {name} not found ({places}); set SERIALPUB_CORPUS_DIR to the "
        "directory holding it"
    )

"""Where the benchmark corpora are found: one setting, ``SERIALPUB_CORPORA_DIR``.

The corpora (BMS-WebView-1 and -2 as FIMI ``.dat`` files, and the attack's background
corpora) are read-only shared data, never copied into the repository. Benchmarks and tests
find them only through this module, never through a path of their own:

- ``SERIALPUB_CORPORA_DIR`` when set (``~`` expanded; a relative value is taken from the
  repository root, so it means the same from any working directory);
- else ``../shared/data`` relative to the repository root (the layout of README.md,
  "Settings").

The service itself never reads a corpus from disk: it gets them in request bodies.

>>> corpus_file(BMS_WEBVIEW_1).name
'bms-webview-1.dat'
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "BMS_WEBVIEW_1",
    "BMS_WEBVIEW_2",
    "DEFAULT_CORPORA_DIR",
    "ENV_VAR",
    "corpora_dir",
    "corpus_file",
    "find_corpus",
    "missing",
]

#: The setting, read here and nowhere else.
ENV_VAR = "SERIALPUB_CORPORA_DIR"
#: Its default, relative to the repository root.
DEFAULT_CORPORA_DIR = "../shared/data"
BMS_WEBVIEW_1 = "bms-webview-1.dat"
BMS_WEBVIEW_2 = "bms-webview-2.dat"

_ROOT = Path(__file__).resolve().parents[2]


def corpora_dir() -> Path:
    """The directory of the corpora: ``$SERIALPUB_CORPORA_DIR``, else ``../shared/data``."""
    configured = os.environ.get(ENV_VAR, "").strip() or DEFAULT_CORPORA_DIR
    return (_ROOT / Path(configured).expanduser()).resolve()


def corpus_file(name: str) -> Path:
    """The path of corpus ``name`` (``bms-webview-2.dat``), whether it exists or not."""
    return corpora_dir() / name


def find_corpus(name: str) -> Path | None:
    """The corpus file ``name``, or ``None`` when the corpora directory lacks it."""
    path = corpus_file(name)
    return path if path.is_file() else None


def missing(name: str) -> str:
    """Why corpus ``name`` cannot be read: the path looked at and how to change it."""
    return (
        f"corpus {name} not found at {corpus_file(name)}; set {ENV_VAR} to the directory "
        f"holding it (default: {DEFAULT_CORPORA_DIR} beside the repository)"
    )

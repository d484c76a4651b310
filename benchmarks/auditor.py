"""Where the benchmarks find the auditors' tools (``judge.py``, ``distortion.py``).

They are the outside auditors' programs, not the project's, and are run, never imported:
``$SERIALPUB_AUDITOR_DIR``, else ``../shared/auditor`` beside the repository (the layout
README.md describes, like the corpora's ``SERIALPUB_CORPORA_DIR``). A benchmark that needs one
and does not find it says so and skips the judging.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["DEFAULT_AUDITOR_DIR", "DISTORTION", "ENV_VAR", "JUDGE", "auditor_dir"]

#: The setting, read here and nowhere else in the benchmarks.
ENV_VAR = "SERIALPUB_AUDITOR_DIR"
#: Its default, relative to the repository root.
DEFAULT_AUDITOR_DIR = "../shared/auditor"

_ROOT = Path(__file__).resolve().parents[1]


def auditor_dir() -> Path:
    """``$SERIALPUB_AUDITOR_DIR``, else ``../shared/auditor`` from the repository root."""
    configured = os.environ.get(ENV_VAR, "").strip() or DEFAULT_AUDITOR_DIR
    return (_ROOT / Path(configured).expanduser()).resolve()


JUDGE = auditor_dir() / "judge.py"
DISTORTION = auditor_dir() / "distortion.py"

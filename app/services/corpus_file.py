"""A corpus file read as the service reads a posted body (``serialpub publish-local``).

One reader, one validation: the file's bytes go through :func:`app.services.ingest.read_corpus`
as a body of the media type its format names, so a term is trimmed, NFC-normalised and refused
for what the service refuses (invisible, control or blank characters), with the line or item
at fault, and a CSV file is read as CSV. The format is the file's extension or the one given
(:data:`FORMATS`); an extension that does not name one is an error, never a guess.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from app.io.compact import Limits
from app.io.terms import PrivateMatch
from app.services.ingest import Corpus, read_corpus

__all__ = ["EXTENSIONS", "FORMATS", "LOCAL_LIMITS", "corpus_format", "read_corpus_file"]

#: A format's name (``--format``) and the media type of the service's body it is.
FORMATS = {"fimi": "text/plain", "csv": "text/csv", "json": "application/json"}
#: The extensions that name a format. ``.txt`` is not one: FIMI lines, CSV and lists of terms
#: are all written as ``.txt``.
EXTENSIONS = {".dat": "fimi", ".fimi": "fimi", ".csv": "csv", ".json": "json"}
#: The service's caps protect a shared server from one body; a local run has its machine to
#: itself, and reads what it is given (term length and characters are checked all the same).
LOCAL_LIMITS = Limits(
    max_transactions=1 << 40,
    max_terms_per_transaction=1 << 20,
    max_distinct_terms=(1 << 31) - 1,
    max_terms_per_release=1 << 40,
)
_CHUNK = 1 << 20
#: A JSON file may hold the transactions' list alone: it is read as the body's field.
_WRAP = (b'{"transactions":', b"}")


def corpus_format(path: Path, given: str | None = None) -> str:
    """The format of ``path``: ``given`` (a name of :data:`FORMATS`), else its extension's.

    >>> corpus_format(Path("2024.csv")), corpus_format(Path("2024.txt"), "fimi")
    ('csv', 'fimi')
    """
    if given is not None:
        if given not in FORMATS:
            raise ValueError(f"unknown format {given!r}; use one of {', '.join(FORMATS)}")
        return given
    found = EXTENSIONS.get(path.suffix.lower())
    if found is None:
        raise ValueError(
            f"{path}: the extension {path.suffix or '(none)'!r} does not say the format; "
            f"name it with --format ({', '.join(FORMATS)}), or use "
            f"{', '.join(EXTENSIONS)}"
        )
    return found


def read_corpus_file(
    path: Path,
    form: str,
    *,
    private_match: PrivateMatch = "casefold",
    require_individual: bool = False,
    limits: Limits = LOCAL_LIMITS,
) -> Corpus:
    """``path`` as a body of format ``form`` (:data:`FORMATS`); the service's error
    (:class:`app.errors.AppError`) naming the line or item at fault otherwise. A JSON file's
    ``label`` and ``private_terms`` are read as a body's are."""
    kind = FORMATS[form]
    wrap = kind == "application/json" and _opens_a_list(path)
    size = path.stat().st_size + (sum(map(len, _WRAP)) if wrap else 0)
    return asyncio.run(
        read_corpus(
            kind,
            _chunks(path, wrap),
            limit=max(size, 1),
            limits=limits,
            private_match=private_match,
            require_individual=require_individual,
        )
    )


def _opens_a_list(path: Path) -> bool:
    with path.open("rb") as handle:
        head = handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(b"[")


async def _chunks(path: Path, wrap: bool) -> AsyncIterator[bytes]:
    if wrap:
        yield _WRAP[0]
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            yield chunk
    if wrap:
        yield _WRAP[1]

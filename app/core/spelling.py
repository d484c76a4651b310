"""What two spellings of one term have in common (pure; :mod:`app.io.terms` matches with it).

The core needs it where it must not print a private term in any spelling: counterfeit rows
draw terms from the rows of earlier releases, which may hold ``hiv`` in clear from before
``HIV`` became private (under ``private_match = "casefold"`` the two are one private term).
"""

from __future__ import annotations

import unicodedata

__all__ = ["JOINERS", "fold"]

#: Zero-width joiners: part of the spelling of Persian, Indic and emoji words, ignored when
#: spellings are compared (they are not visible).
JOINERS = "\u200c\u200d"

_DROP = {ord(c): None for c in JOINERS}


def fold(term: str) -> str:
    """NFKC case fold without joiners: what two spellings of one word have in common.

    >>> fold("ＨＩＶ") == fold("hiv")
    True
    """
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", term).casefold())
    return folded.translate(_DROP).strip()

"""What two spellings of one term have in common (pure; :mod:`app.io.terms` matches with it).

The core needs it where it must not print a private term in any spelling: counterfeit rows
draw terms from the rows of earlier releases, which may hold ``hiv`` in clear from before
``HIV`` became private (under ``private_match = "casefold"`` the two are one private term).
"""

from __future__ import annotations

import unicodedata

__all__ = ["JOINERS", "fold", "visible"]

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


def visible(term: str) -> str:
    r"""``term`` as a reader sees it: NFC without joiners (no case or width fold).

    Spellings that differ only by joiners look the same, so even ``private_match = "exact"``,
    which keeps ``hiv`` apart from ``HIV``, must take ``HI\u200dV`` as ``HIV``: otherwise a
    release would print what reads as a private term in clear.

    >>> visible("HI\u200dV") == visible("HIV") != visible("hiv")
    True
    """
    return unicodedata.normalize("NFC", term.translate(_DROP)).strip()

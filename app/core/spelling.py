r"""What two spellings of one term have in common (pure; :mod:`app.io.terms` matches with it).

The core needs it where it must not print a private term in any spelling: counterfeit rows
draw terms from the rows of earlier releases, which may hold ``hiv`` in clear from before
``HIV`` became private (under ``private_match = "casefold"`` the two are one private term).

Three keys, from the strictest:

- :func:`visible`: the NFC spelling without joiners (``HI\u200dV`` reads as ``HIV``);
- :func:`skeleton`: Unicode TR39's skeleton of that spelling, which two strings share when
  they look the same: Cyrillic ``НIV`` and Greek ``HΙV`` are ``HIV`` to a reader;
- :func:`fold`: the skeleton of the NFKC case fold, less white space and the
  script-independent diacritics (``hiv``, ``ＨＩＶ``, Turkish ``HİV``, ``H IV`` with a
  no-break space and ``herpeѕ`` with a Cyrillic ``ѕ`` all fold as ``HIV`` and ``herpes`` do).

The confusable classes are Unicode's ``confusables.txt`` as the ``confusable-homoglyphs``
package ships it (TR39 §4); the script of a mark is its ``Scripts.txt`` value, from the same
package.
"""

from __future__ import annotations

import unicodedata
from functools import cache

from confusable_homoglyphs import categories, confusables

__all__ = ["JOINERS", "fold", "skeleton", "visible"]

#: Zero-width joiners: part of the spelling of Persian, Indic and emoji words, ignored when
#: spellings are compared (they are not visible).
JOINERS = "\u200c\u200d"

_DROP = {ord(c): None for c in JOINERS}

#: The package writes a right-to-left character of confusables.txt between left-to-right
#: marks, as the file's comments display it: they are not part of the character.
_DISPLAY_MARKS = {0x200E: None, 0x200F: None}


def _homoglyphs(char: str) -> list[str]:
    """The characters (or sequences) confusables.txt puts in one class with ``char``."""
    found = confusables.is_confusable(char, greedy=True)
    if not found:
        return []
    return [str(h["c"]).translate(_DISPLAY_MARKS) for h in found[0]["homoglyphs"]]


@cache
def _prototype(char: str) -> str:
    """What ``char`` is written as in a skeleton: the prototype of its confusable class.

    The package keeps each line ``source ; prototype`` of confusables.txt as an edge both
    ways, so a class is a star: its prototype is joined to every source, a source to its
    prototype alone. A class of two has no telling centre; either character stands for
    both, the smaller one here (a sequence, such as ``rn`` for ``m``, is always the
    prototype: sources are single characters).
    """
    others = _homoglyphs(char)
    if len(others) != 1:
        return char  # not confusable, or the centre of its class
    (other,) = others
    if len(other) > 1:
        return "".join(_prototype(c) for c in other)
    if len(_homoglyphs(other)) > 1:
        return _prototype(other)
    return min(char, other)


class _Prototypes(dict[int, str]):
    """A ``str.translate`` table that learns each character's prototype on first sight."""

    def __missing__(self, code: int) -> str:
        value = self[code] = _prototype(chr(code))
        return value


class _Diacritics(dict[int, str | None]):
    """A ``str.translate`` table dropping the nonspacing marks of no script of their own."""

    def __missing__(self, code: int) -> str | None:
        char = chr(code)
        drop = unicodedata.category(char) == "Mn" and categories.alias(char) == "INHERITED"
        value = self[code] = None if drop else char
        return value


_PROTOTYPES = _Prototypes()
_DIACRITICS = _Diacritics()


def visible(term: str) -> str:
    r"""``term`` as a reader sees it: NFC without joiners (no case or width fold).

    Spellings that differ only by joiners look the same, so even ``private_match = "exact"``,
    which keeps ``hiv`` apart from ``HIV``, must take ``HI\u200dV`` as ``HIV``: otherwise a
    release would print what reads as a private term in clear.

    >>> visible("HI\u200dV") == visible("HIV") != visible("hiv")
    True
    """
    return unicodedata.normalize("NFC", term.translate(_DROP)).strip()


def skeleton(term: str) -> str:
    """TR39's skeleton of :func:`visible`: equal for spellings that look the same.

    NFD, each character replaced by the prototype of its confusable class, NFD again
    (TR39 §4). Case stays, but for letters that look alike in both (``I`` and ``l``).

    >>> skeleton("\u041dIV") == skeleton("H\u0399V") == skeleton("HIV") != skeleton("hiv")
    True
    """
    if term.isascii():  # the common case: NFC and NFD leave ASCII as it is
        return _nfd(term.strip().translate(_PROTOTYPES))
    text = unicodedata.normalize("NFD", visible(term))
    return _nfd(text.translate(_PROTOTYPES))


def fold(term: str) -> str:
    """What every spelling of one word has in common: case, width, white space, look-alike
    letters and the diacritics of no script of their own aside.

    The NFKC case fold (``ß`` is ``ss``), without its white space, upper-cased so that a
    look-alike of either case is met (Cyrillic ``н`` looks like a small capital ``H``), as
    its TR39 skeleton; then the nonspacing marks whose script is Inherited (the combining
    diacritics U+0300-036F and their kin: ``HİV`` is ``HIV`` with a dot above) are dropped.
    A mark of a script, such as a Devanagari vowel sign, spells its word and stays.

    White space goes because a reader takes ``H IV`` for ``HIV``, whatever space it is: a
    no-break, thin or hair space (U+00A0, U+2009, U+200A) keeps a term whole where a text
    upload splits on the others, and looks like a space or nothing.

    >>> fold("ＨＩＶ") == fold("hiv") == fold("H\u0130V") == fold("\u043dIV") == fold("HIV")
    True
    >>> fold("H\u00a0IV") == fold("h iv") == fold("HIV")
    True
    >>> fold("canc\u00e9r") == fold("CANCER") != fold("dancer")
    True
    """
    if term.isascii():  # the common case: no compatibility form, joiner or mark
        upper = "".join(term.upper().split())
    else:
        folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", term).casefold())
        upper = unicodedata.normalize("NFD", "".join(folded.translate(_DROP).split()).upper())
    shape = _nfd(upper.translate(_PROTOTYPES))
    return shape if shape.isascii() else shape.translate(_DIACRITICS)


def _nfd(text: str) -> str:
    return text if text.isascii() else unicodedata.normalize("NFD", text)

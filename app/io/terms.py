r"""Term spelling: one canonical form per term, and which spellings name a private term.

Every term and every private term is normalised at ingest (:func:`normalize_term`): surrounding
white space trimmed, Unicode NFC, and refused when it holds a character that no one types on
purpose and that would let two visually identical terms differ (control, lone surrogate,
zero-width or bidirectional format characters, and every Default_Ignorable_Code_Point:
variation selectors, the combining grapheme joiner, Hangul fillers, tags; see
:data:`DEFAULT_IGNORABLE`), or that PostgreSQL cannot store (NUL). The zero-width joiner and
non-joiner alone stay: they spell Persian, Indic and emoji words, and matching ignores them.
Refused, not stripped: a stripped term would be published as something the hospital did not
send, and a refusal names the item or line and the code point, so the sender can fix its
source. The Default_Ignorable code points refused are U+00AD, U+034F, U+061C, U+115F-1160,
U+17B4-17B5, U+180B-180F, U+200B, U+200E-200F, U+202A-202E, U+2060-206F, U+3164, U+FE00-FE0F,
U+FEFF, U+FFA0, U+FFF0-FFF8, U+1BCA0-1BCA3, U+1D173-1D17A and U+E0000-E0FFF.

Two characters that are not Default_Ignorable render as nothing all the same and are refused
with them (:data:`BLANK`): U+2800 (BRAILLE PATTERN BLANK) and U+1D159 (MUSICAL SYMBOL NULL
NOTEHEAD).

Matching a term against the private terms (:class:`PrivateMatcher`) goes further under
``private_match="casefold"`` (the default): :func:`fold` (case, width, white space, TR39
look-alike letters, combining diacritics), so that ``hiv``, ``ＨＩＶ``, ``HİV``, ``H IV`` with
a no-break space, Cyrillic ``НIV`` and ``HIV`` are one private term. Under ``"exact"`` the NFC
spelling matches, less the joiners (:func:`visible`: ``HI\u200dV`` reads as ``HIV``), and so
does any spelling that looks the same (:func:`skeleton`, TR39: Cyrillic ``НIV``); other
spellings that fold onto a private term are reported, not merged. Every such spelling is
reported to the publisher (:class:`FoldWarning`), and so is a private term that occurs in no
transaction, with the published term nearest to it (:func:`absent_private_terms`: ``canser``
when the snapshot spells it ``cancer``).
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Literal

import numpy as np
from rapidfuzz import fuzz, process

from app.core.errors import InvalidCorpus, WarningCode
from app.core.spelling import JOINERS as _JOINERS
from app.core.spelling import fold, skeleton, visible
from app.core.validation import MAX_TERM_LENGTH

__all__ = [
    "PRIVATE_MATCH",
    "PrivateMatch",
    "PrivateMatcher",
    "FoldWarning",
    "absent_private_terms",
    "bad_character",
    "block_is_clean",
    "term_pattern",
    "text_pattern",
    "describe",
    "fold",
    "normalize_term",
    "normalize_private_terms",
    "private_terms_from_lines",
    "skeleton",
    "text_line_check",
    "visible",
]

PrivateMatch = Literal["casefold", "exact"]
PRIVATE_MATCH: tuple[PrivateMatch, ...] = ("casefold", "exact")

# Zero-width joiners (_JOINERS) are part of the spelling of Persian, Indic and emoji words: a
# term may hold them, but matching ignores them (they are not visible). fold lives in the core,
# which must not print a private term in any spelling either (app.core.spelling).


#: Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt, Unicode 15.1 and 16.0:
#: the property has not changed since U+180F joined it in 14.0). These render as nothing, so
#: ``HIV\ufe0f``, ``HI\u034fV`` or ``HIV\u3164`` would look like ``HIV`` and be published in
#: clear as another term. Most are Cf, caught by category; the others are marks (U+034F,
#: variation selectors) and letters (Hangul fillers) that only this list names. Python's
#: ``unicodedata`` has no such property, and a 17-range table that changes once a decade is
#: lighter than a compiled dependency.
DEFAULT_IGNORABLE: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)


#: Characters that render as nothing though Unicode does not call them ignorable: a blank
#: glyph (``HIV\u2800`` shows as ``HIV``). Refused like the Default_Ignorable ones.
BLANK: tuple[tuple[int, int], ...] = ((0x2800, 0x2800), (0x1D159, 0x1D159))

_IGNORABLE = frozenset(cp for a, b in (*DEFAULT_IGNORABLE, *BLANK) for cp in range(a, b + 1))


@cache
def _forbidden() -> tuple[tuple[int, int], ...]:
    """The code points no text may hold, as ranges: Cc, Cs, Cf, line and paragraph separators,
    every Default_Ignorable_Code_Point (:data:`DEFAULT_IGNORABLE`) and the blank glyphs
    (:data:`BLANK`). Built from the running Python's Unicode tables: a scan of all 1.1 million
    code points, so once a process, whatever patterns are made of it."""
    ranges: list[tuple[int, int]] = []
    for cp in range(sys.maxunicode + 1):
        if cp in _IGNORABLE or unicodedata.category(chr(cp)) in ("Cc", "Cf", "Cs", "Zl", "Zp"):
            if ranges and ranges[-1][1] == cp - 1:
                ranges[-1] = (ranges[-1][0], cp)
            else:
                ranges.append((cp, cp))
    return tuple(ranges)


@cache
def _ranges(allowed: str) -> tuple[tuple[int, int], ...]:
    """:func:`_forbidden` less the code points of ``allowed``.

    >>> _ranges(chr(9) + chr(10))[:2], _forbidden()[:1]
    (((0, 8), (11, 31)), ((0, 31),))
    """
    ranges: list[tuple[int, int]] = []
    for low, high in _forbidden():
        for cp in sorted(ord(char) for char in set(allowed) if low <= ord(char) <= high):
            if low < cp:
                ranges.append((low, cp - 1))
            low = cp + 1
        if low <= high:
            ranges.append((low, high))
    return tuple(ranges)


def _forbidden_class(allowed: str = _JOINERS) -> str:
    """A Python regex class body of :func:`_ranges`."""
    return "".join(
        f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in _ranges(allowed)
    )


@cache
def _term_pattern() -> re.Pattern[str]:
    return re.compile(f"[{_forbidden_class()}]")


@cache
def _line_pattern() -> re.Pattern[str]:
    # In a text line the tab separates terms; every other forbidden character is refused.
    return re.compile(f"[{_forbidden_class(_JOINERS + chr(9) + chr(13))}]")


@cache
def _block_pattern() -> re.Pattern[str]:
    # A block of lines: tabs, line ends and carriage returns are white space there.
    return re.compile(f"[{_forbidden_class(_JOINERS + chr(9) + chr(10) + chr(13))}]")


@cache
def _ascii_block_pattern() -> re.Pattern[str]:
    # The block's class restricted to ASCII: what an ASCII block can hold of it. A small
    # class is a table lookup per character where the whole one is a search among ranges
    # (156 against 614 us a 64 KiB block; a tenth of a text upload's parse).
    allowed = _JOINERS + chr(9) + chr(10) + chr(13)
    ascii = [(a, min(b, 0x7F)) for a, b in _ranges(allowed) if a < 0x80]
    return re.compile("[" + "".join(f"\\x{a:02x}-\\x{b:02x}" for a, b in ascii) + "]")


def block_is_clean(text: str) -> bool:
    """No line of ``text`` holds a forbidden character (one scan for a whole block; a
    carriage return is white space, as at a CRLF line end).

    >>> block_is_clean("1 2 3\\r\\n4\\t5"), block_is_clean("1 2\\x0b"), block_is_clean("é\\u200b")
    (True, False, False)
    """
    if text.isascii():
        return _ascii_block_pattern().search(text) is None
    return _block_pattern().search(text) is None


@cache
def term_pattern() -> str:
    """A JSON Schema ``pattern`` for a term (documentation: clients and schemathesis see what
    :func:`normalize_term` accepts): at least one character that is not white space, and
    none of the forbidden ones of the Basic Multilingual Plane (``\\uXXXX`` escapes, read
    alike by ECMA, Python and Rust regular expressions)."""
    bmp = _forbidden_ranges(0xFFFF)
    return f"^[^{bmp}]*[^\\s{bmp}][^{bmp}]*$"


@cache
def text_pattern() -> str:
    """``pattern`` of a label, pseudonym or cluster label: none of the forbidden characters."""
    return f"^[^{_forbidden_ranges(0xFFFF)}]*$"


def _forbidden_ranges(top: int) -> str:
    out = []
    for a, b in _ranges(_JOINERS):
        if a > top:
            break
        b = min(b, top)
        out.append(f"\\u{a:04x}" if a == b else f"\\u{a:04x}-\\u{b:04x}")
    return "".join(out)


def describe(char: str) -> str:
    """``U+200B (ZERO WIDTH SPACE)``: how an error names a character."""
    name = unicodedata.name(char, "")
    if not name:
        if 0xD800 <= ord(char) <= 0xDFFF:
            name = "a lone surrogate"
        elif ord(char) in _IGNORABLE:
            # Reserved default-ignorables (U+2065, U+FFF0, most tags) have no name, and are
            # not controls: say why they are refused.
            name = "an invisible, default-ignorable code point"
        else:
            name = "a control character"
    return f"U+{ord(char):04X} ({name})"


def bad_character(text: str) -> int | None:
    """Index of the first character a term may not hold, or ``None``."""
    match = _term_pattern().search(text)
    return None if match is None else match.start()


def text_line_check(line: str) -> int | None:
    """Index of the first character a text line may not hold (tabs and carriage returns
    are white space)."""
    match = _line_pattern().search(line)
    return None if match is None else match.start()


def _fault(where: dict[str, int], message: str, **details: object) -> InvalidCorpus:
    name, value = next(iter(where.items()))
    return InvalidCorpus(f"{name} {value}: {message}", {**where, **details})


def normalize_term(raw: str, where: dict[str, int], field: str = "terms") -> str:
    """The canonical spelling of ``raw`` (trimmed, NFC); :class:`InvalidCorpus` naming
    ``where`` (``{"line": n}`` or ``{"item": i}``) for an empty, too long or unprintable term.
    """
    index = bad_character(raw)
    if index is not None:
        raise _fault(
            where,
            f"term {raw[:40]!r} contains {describe(raw[index])}",
            field=field,
            column=index + 1,
        )
    term = unicodedata.normalize("NFC", raw.strip())
    if not term:
        raise _fault(where, "empty term", field=field)
    if len(term) > MAX_TERM_LENGTH:
        raise _fault(
            where, f"term longer than {MAX_TERM_LENGTH} characters", field=field, length=len(term)
        )
    return term


def normalize_private_terms(
    raw: Iterable[str], mode: PrivateMatch, *, field: str = "private_terms"
) -> list[str]:
    """Normalised private terms in their given order, without repeats; two spellings of one
    term under ``mode`` are refused (which one is meant would be a guess)."""
    return _distinct_private((({"item": i}, value) for i, value in enumerate(raw)), mode, field)


def private_terms_from_lines(
    text: str, mode: PrivateMatch, *, field: str = "private_terms"
) -> list[str]:
    """The private terms of a file of them, one a line: blank lines are skipped and the
    white space around a term trimmed (a term may hold spaces: ``hepatitis C``); a fault
    names its line, as :func:`normalize_private_terms` does its item.

    >>> private_terms_from_lines("HIV\\r\\n\\n  hepatitis C \\n", "casefold")
    ['HIV', 'hepatitis C']
    """
    # White space around a term is layout (a tab, a carriage return), not part of it.
    lines = (line.strip() for line in text.split("\n"))
    pairs = (({"line": n}, line) for n, line in enumerate(lines, 1) if line)
    return _distinct_private(pairs, mode, field)


def _distinct_private(
    pairs: Iterable[tuple[dict[str, int], str]], mode: PrivateMatch, field: str
) -> list[str]:
    seen: tuple[dict[str, tuple[int, str]], ...] = ({}, {})
    out: list[str] = []
    kept: set[str] = set()
    for where, value in pairs:
        term = normalize_term(value, where, field)
        if term in kept:
            continue
        name, number = next(iter(where.items()))
        keys = _match_keys(term, mode)
        for table, key in zip(seen, keys, strict=True):
            if key in table:
                first, spelling = table[key]
                raise InvalidCorpus(
                    f"{name} {number}: private term {term!r} is the same term as {spelling!r} "
                    f"({name} {first}) under private_match {mode!r}",
                    {**where, "field": field, "same_as": first},
                )
        for table, key in zip(seen, keys, strict=True):
            table[key] = (number, term)
        out.append(term)
        kept.add(term)
    return out


def _match_keys(term: str, mode: PrivateMatch) -> tuple[str, str]:
    r"""What two spellings of one private term have in common under ``mode``: the first key
    or the second. Never the spelling alone: joiners are invisible, so ``HI\u200dV`` is
    ``HIV`` even under exact, and so is Cyrillic ``НIV``, which looks the same
    (:func:`skeleton`)."""
    return (fold(term) if mode == "casefold" else visible(term)), skeleton(term)


@dataclass(frozen=True, slots=True)
class FoldWarning:
    """A term that folds onto a private term: merged into it (casefold) or kept apart."""

    term: str
    private_term: str
    treated_as: Literal["private", "public"]

    def as_dict(self) -> dict[str, str]:
        if self.treated_as == "private":
            verdict = "published as that private term"
        else:
            verdict = (
                "published in clear as another term (private_match 'exact'; add it to the "
                "private terms if it is the same)"
            )
        return {
            "code": WarningCode.TERM_FOLDS_ONTO_PRIVATE_TERM,
            "term": self.term,
            "private_term": self.private_term,
            "treated_as": self.treated_as,
            "message": f"{self.term!r} is a spelling of the private term {self.private_term!r} "
            f"(case, width, spacing, accents or look-alike letters): {verdict}",
        }


#: How alike (rapidfuzz ``ratio``, 0-100, of the folds) a published term must be to a private
#: term that occurs nowhere to be named beside it: ``canser`` and ``cancer`` score 83, a
#: single changed letter in four 75, ``HIV`` and ``HPV`` 67.
NEAREST_CUTOFF = 70.0


def absent_private_terms(
    private_terms: Iterable[str], terms: Sequence[str]
) -> list[dict[str, str]]:
    """A warning for each private term that no term of ``terms`` (a dictionary remapped by
    :meth:`PrivateMatcher.remap`: every spelling of a private term is that term) names, with
    the published term nearest to it when one is close (:data:`NEAREST_CUTOFF`): a private
    term misspelt on either side (``canser``) matches nothing, and its true spelling is
    published in clear.

    >>> [w["nearest"] for w in absent_private_terms(["canser"], ["cancer", "theft"])]
    ['cancer']
    """
    private = set(private_terms)
    absent = sorted(private.difference(terms))
    if not absent:
        return []
    published = [t for t in terms if t not in private]
    nearest = _nearest([fold(t) for t in absent], [fold(t) for t in published])
    warnings = []
    for term, found in zip(absent, nearest, strict=True):
        warning = {"code": WarningCode.PRIVATE_TERM_NOT_IN_SNAPSHOT, "term": term}
        if found is None:
            warning["message"] = (
                f"the private term {term!r} occurs in no transaction of this snapshot, and no "
                "published term is close to it: check how the snapshot spells it"
            )
        else:
            near, score = published[found[0]], found[1] / 100
            warning |= {"nearest": near, "similarity": f"{score:.2f}"}
            warning["message"] = (
                f"the private term {term!r} occurs in no transaction of this snapshot; the "
                f"nearest published term is {near!r} (similarity {score:.2f}), published in "
                "clear: if it is the same term, make it private"
            )
        warnings.append(warning)
    return warnings


def _nearest(queries: list[str], keys: list[str]) -> list[tuple[int, float] | None]:
    """Per query, the index in ``keys`` of the most alike (the first of equals) and its
    ``ratio``, or ``None`` under :data:`NEAREST_CUTOFF`.

    One ``cdist`` a block of queries (scores as bytes): 100 queries against 200,000 keys took
    15 s one ``extractOne`` at a time and 2.2 s so, on a loaded two-core machine."""
    found: list[tuple[int, float] | None] = []
    if not keys:
        return [None] * len(queries)
    for first in range(0, len(queries), _BLOCK):
        block = queries[first : first + _BLOCK]
        scores = process.cdist(
            block, keys, scorer=fuzz.ratio, score_cutoff=NEAREST_CUTOFF, dtype=np.uint8, workers=1
        )
        for query, row in zip(block, scores, strict=True):
            best = int(row.argmax())
            if row[best] == 0:
                found.append(None)
            else:  # the exact score of the pair, not the byte it was compared as
                found.append((best, fuzz.ratio(query, keys[best])))
    return found


#: Queries scored at once: the block's matrix is ``_BLOCK`` bytes a key.
_BLOCK = 64


class PrivateMatcher:
    """Maps each term to the private term it names, if any (``private_match`` of a series)."""

    def __init__(self, private_terms: Iterable[str], mode: PrivateMatch) -> None:
        self.mode = mode
        self._exact = frozenset(private_terms)
        self._folded: dict[str, str] = {}
        #: The private term each key of :func:`_match_keys` names under ``mode``.
        self._keyed: tuple[dict[str, str], dict[str, str]] = ({}, {})
        for term in sorted(self._exact):
            self._folded.setdefault(fold(term), term)
            for table, key in zip(self._keyed, _match_keys(term, mode), strict=True):
                table.setdefault(key, term)

    def _named(self, term: str) -> str | None:
        """The private term ``term`` is a spelling of under ``mode``, if any."""
        for table, key in zip(self._keyed, _match_keys(term, self.mode), strict=True):
            found = table.get(key)
            if found is not None:
                return found
        return None

    def canonical_private(self, extra: Iterable[str]) -> list[str]:
        """Extra private terms of a release, written as the series' spelling when they
        name one of its private terms (casefold; under exact, when they differ from it only
        by joiners or look the same)."""
        return sorted({self._named(term) or term for term in extra})

    def remap(self, terms: Sequence[str]) -> tuple[list[str], list[FoldWarning]]:
        """``terms`` (a corpus' dictionary) with every spelling of a private term replaced
        by that private term (casefold; under exact, the spellings that differ only by
        joiners or look the same), and a warning for every spelling that folds onto a
        private term without being it."""
        out = list(terms)
        warnings: list[FoldWarning] = []
        for i, term in enumerate(terms):
            if term in self._exact:
                continue
            private = self._named(term)
            if private is not None:
                out[i] = private
                warnings.append(FoldWarning(term, private, "private"))
            elif self.mode == "exact":  # another case or width stays another term
                private = self._folded.get(fold(term))
                if private is not None:
                    warnings.append(FoldWarning(term, private, "public"))
        return out, warnings

"""Term spelling (no database): normalisation, the private-term fold, and the documented
pattern agreeing with what validation accepts."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.errors import InvalidCorpus
from app.io.terms import (
    PrivateMatcher,
    fold,
    normalize_private_terms,
    normalize_term,
    term_pattern,
)

WHERE = {"line": 3}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (" HIV ", "HIV"),
        ("\u3000cancer\u00a0", "cancer"),
        (unicodedata.normalize("NFD", "cancér"), "cancér"),
        ("می\u200cخواهم", "می\u200cخواهم"),  # a Persian word keeps its zero-width non-joiner
    ],
)
def test_normalize(raw: str, expected: str) -> None:
    assert normalize_term(raw, WHERE) == expected


@pytest.mark.parametrize(
    ("raw", "column"),
    [
        ("HIV\u200b", 4),
        ("a\x00b", 2),
        ("x\ud800", 2),
        ("\u202eabc", 1),
        ("a\tb", 2),
    ],
)
def test_unprintable_refused_with_column(raw: str, column: int) -> None:
    with pytest.raises(InvalidCorpus) as fault:
        normalize_term(raw, WHERE)
    assert fault.value.details == {"line": 3, "field": "terms", "column": column}
    assert fault.value.message.startswith("line 3: term")


def test_empty_and_long_refused() -> None:
    for raw in ("", "   ", "x" * 201):
        with pytest.raises(InvalidCorpus):
            normalize_term(raw, WHERE)


def test_fold_and_matcher() -> None:
    assert fold("ＨＩＶ") == fold("hiv") == fold("HIV") == "hiv"
    matcher = PrivateMatcher(["HIV", "cancér"], "casefold")
    terms, warnings = matcher.remap(["HIV", "hiv", "ＨＩＶ", "theft", "CANCÉR"])
    assert terms == ["HIV", "HIV", "HIV", "theft", "cancér"]
    assert [(w.term, w.treated_as) for w in warnings] == [
        ("hiv", "private"),
        ("ＨＩＶ", "private"),
        ("CANCÉR", "private"),
    ]
    exact = PrivateMatcher(["HIV"], "exact")
    assert exact.remap(["hiv", "HIV"])[0] == ["hiv", "HIV"]
    assert matcher.canonical_private(["hiv", "mansl"]) == ["HIV", "mansl"]


def test_private_terms_deduplicated_or_refused() -> None:
    assert normalize_private_terms(["HIV", " HIV", "cancer"], "casefold") == ["HIV", "cancer"]
    assert normalize_private_terms(["HIV", "hiv"], "exact") == ["HIV", "hiv"]
    with pytest.raises(InvalidCorpus) as fault:
        normalize_private_terms(["HIV", "hiv"], "casefold")
    assert fault.value.details == {"item": 1, "field": "private_terms", "same_as": 0}


def test_exact_match_takes_joiner_spellings_as_the_private_term() -> None:
    """Joiners are invisible: under exact, ``HI\u200dV`` was another term, published in
    clear, that reads as ``HIV``. Case and width still make another term."""
    exact = PrivateMatcher(["HIV"], "exact")
    terms, warnings = exact.remap(["HI\u200dV", "\u200cHIV", "hiv", "HIV", "theft"])
    assert terms == ["HIV", "HIV", "hiv", "HIV", "theft"]
    assert [(w.term, w.treated_as) for w in warnings] == [
        ("HI\u200dV", "private"),
        ("\u200cHIV", "private"),
        ("hiv", "public"),
    ]
    assert exact.canonical_private(["H\u200dIV", "mansl"]) == ["HIV", "mansl"]
    with pytest.raises(InvalidCorpus) as fault:
        normalize_private_terms(["HIV", "HI\u200dV"], "exact")
    assert fault.value.details == {"item": 1, "field": "private_terms", "same_as": 0}
    # A Persian word keeps its non-joiner; it is matched as itself.
    persian = "می\u200cخواهم"
    assert PrivateMatcher([persian], "exact").remap([persian, "میخواهم"])[0] == [persian] * 2


#: Default_Ignorable_Code_Point, as DerivedCoreProperties.txt (Unicode 16.0) lists it, written
#: here apart from app.io.terms so that a slip in either copy shows.
DERIVED_DEFAULT_IGNORABLE = [
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
    (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
]  # fmt: skip


@pytest.mark.parametrize(
    "cp",
    sorted({cp for a, b in DERIVED_DEFAULT_IGNORABLE for cp in (a, (a + b) // 2, b)}),
    ids=lambda cp: f"U+{cp:04X}",
)
def test_every_default_ignorable_is_refused_naming_it(cp: int) -> None:
    """Each renders as nothing (``HIV\ufe0f`` reads as ``HIV``): refused, and named, wherever
    it sits; the two joiners alone are allowed (Persian, Indic and emoji spellings)."""
    for raw in (f"HIV{chr(cp)}", f"H{chr(cp)}IV", f"{chr(cp)}HIV"):
        if chr(cp) in "\u200c\u200d":
            assert normalize_term(raw, WHERE) == raw
            continue
        with pytest.raises(InvalidCorpus) as fault:
            normalize_term(raw, WHERE)
        assert f"U+{cp:04X} (" in fault.value.message, fault.value.message
        assert "control" not in fault.value.message, fault.value.message
        assert fault.value.details["column"] == raw.index(chr(cp)) + 1


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0xFFFF), max_size=12))
def test_documented_pattern_agrees_with_validation(raw: str) -> None:
    """The OpenAPI ``pattern`` of a term accepts exactly what normalisation accepts (in
    the Basic Multilingual Plane; length aside)."""
    documented = re.fullmatch(term_pattern(), raw) is not None
    try:
        normalize_term(raw, WHERE)
        accepted = True
    except InvalidCorpus:
        accepted = False
    assert documented == accepted, repr(raw)

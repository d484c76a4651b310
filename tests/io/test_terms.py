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
    _block_pattern,
    absent_private_terms,
    block_is_clean,
    fold,
    normalize_private_terms,
    normalize_term,
    private_terms_from_lines,
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
    assert fold("ＨＩＶ") == fold("hiv") == fold("HIV") != fold("HPV")
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


@pytest.mark.parametrize("cp", [0x2800, 0x1D159], ids=lambda cp: f"U+{cp:04X}")
def test_blank_glyphs_are_refused_naming_them(cp: int) -> None:
    """Not Default_Ignorable, but blank: ``HIV\u2800`` looked like ``HIV`` and was another
    term, published in clear."""
    for raw in (f"HIV{chr(cp)}", f"H{chr(cp)}IV"):
        with pytest.raises(InvalidCorpus) as fault:
            normalize_term(raw, WHERE)
        assert f"U+{cp:04X} ({unicodedata.name(chr(cp))})" in fault.value.message
        assert fault.value.details["column"] == raw.index(chr(cp)) + 1


#: Spellings a reader takes for ``HIV`` or ``herpes`` (Cyrillic Н and ѕ, Greek Ι, a dot above),
#: normalised as at ingest: ``HIV`` + U+0307 dots the V.
LOOK_ALIKES = ["\u041dIV", "H\u0399V", "H\u0130V", "HI\u0307V", "HIV\u0307", "herpe\u0455"]


def test_look_alikes_are_the_private_term_under_casefold() -> None:
    spellings = [normalize_term(t, WHERE) for t in LOOK_ALIKES]
    assert spellings[2] == spellings[3] == "H\u0130V"  # NFC composes I and the dot
    matcher = PrivateMatcher(["HIV", "herpes"], "casefold")
    terms, warnings = matcher.remap([*spellings, "HPV", "herpetic"])
    assert terms == ["HIV"] * 5 + ["herpes", "HPV", "herpetic"]
    assert [(w.term, w.private_term, w.treated_as) for w in warnings] == [
        (t, "herpes" if t.startswith("herp") else "HIV", "private") for t in spellings
    ]
    assert matcher.canonical_private(["\u041dIV", "mansl"]) == ["HIV", "mansl"]
    with pytest.raises(InvalidCorpus) as fault:
        normalize_private_terms(["herpes", "herpe\u0455"], "casefold")
    assert fault.value.details == {"item": 1, "field": "private_terms", "same_as": 0}


def test_exact_takes_what_looks_the_same_and_warns_of_the_rest() -> None:
    """Under exact, a spelling that looks the same as a private term (TR39 skeleton) is it,
    as a joiner spelling is; a dot or another case is another term, and is reported."""
    exact = PrivateMatcher(["HIV"], "exact")
    terms, warnings = exact.remap(["\u041dIV", "H\u0399V", "H\u0130V", "hiv", "HPV"])
    assert terms == ["HIV", "HIV", "H\u0130V", "hiv", "HPV"]
    assert [(w.term, w.treated_as) for w in warnings] == [
        ("\u041dIV", "private"),
        ("H\u0399V", "private"),
        ("H\u0130V", "public"),
        ("hiv", "public"),
    ]
    assert "published in clear" in warnings[-1].as_dict()["message"]
    with pytest.raises(InvalidCorpus):
        normalize_private_terms(["HIV", "\u041dIV"], "exact")


def test_a_private_term_absent_from_the_snapshot_names_the_nearest_published_one() -> None:
    terms = ["theft", "cancer", "HIV", "dancers"]
    warnings = absent_private_terms(["canser", "HIV", "mansl"], terms)
    assert [(w["term"], w.get("nearest"), w.get("similarity")) for w in warnings] == [
        ("canser", "cancer", "0.83"),
        ("mansl", None, None),
    ]
    assert {w["code"] for w in warnings} == {"private_term_not_in_snapshot"}
    assert "'cancer'" in warnings[0]["message"]
    assert absent_private_terms(["HIV"], terms) == []


def test_private_terms_from_lines_one_a_line() -> None:
    """A file of private terms was split on white space: ``hepatitis C`` made ``hepatitis``
    and ``C`` private, and published ``hepatitis C`` in clear."""
    text = "\ufeffHIV\r\n\n  hepatitis C \t\n\nHIV\n"
    assert private_terms_from_lines(text.removeprefix("\ufeff"), "casefold") == [
        "HIV",
        "hepatitis C",
    ]
    with pytest.raises(InvalidCorpus) as fault:
        private_terms_from_lines("HIV\n\nhe\u200bpes\n", "casefold")
    assert fault.value.details == {"line": 3, "field": "private_terms", "column": 3}
    with pytest.raises(InvalidCorpus) as same:
        private_terms_from_lines("HIV\n\nhiv\n", "casefold")
    assert same.value.details == {"line": 3, "field": "private_terms", "same_as": 1}


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


def test_an_ascii_block_is_judged_as_by_the_whole_class() -> None:
    """An ASCII block is scanned against the class's ASCII part: every ASCII character, on
    its own and inside a line, is refused exactly when the whole class refuses it."""
    for cp in range(0x80):
        for text in (chr(cp), f"12 3{chr(cp)}4\n5"):
            assert block_is_clean(text) == (_block_pattern().search(text) is None), cp


#: ``HIV`` with a space inside: a no-break, thin, hair, ideographic and plain space. A text
#: upload splits on each of them, JSON and CSV keep the term whole.
SPACED = ["H\u00a0IV", "H\u2009IV", "H\u200aIV", "H\u3000IV", "H IV", "h iv"]


def test_a_space_inside_a_private_term_is_that_term_under_casefold_and_warned_under_exact() -> None:
    """``H`` + U+00A0 + ``IV`` reads as ``HIV``; it was another term, published in clear
    with no warning in either mode. Under casefold it is ``HIV``; under exact it stays another
    term (a space shows), reported as a spelling of ``HIV`` like ``hiv``."""
    spellings = [normalize_term(t, WHERE) for t in SPACED]
    assert spellings == SPACED  # allowed characters: a term may hold spaces
    casefold = PrivateMatcher(["HIV"], "casefold")
    terms, warnings = casefold.remap([*spellings, "HPV", "H", "IV"])
    assert terms == ["HIV"] * len(SPACED) + ["HPV", "H", "IV"]
    assert [(w.term, w.treated_as) for w in warnings] == [(t, "private") for t in SPACED]
    assert "spacing" in warnings[0].as_dict()["message"]
    exact = PrivateMatcher(["HIV"], "exact")
    terms, warnings = exact.remap(spellings)
    assert terms == spellings
    assert [(w.term, w.treated_as) for w in warnings] == [(t, "public") for t in SPACED]
    # Under exact, spaces that look alike are one spelling (TR39: U+00A0 is a space).
    assert PrivateMatcher(["hepatitis C"], "exact").remap(["hepatitis\u00a0C"])[0] == [
        "hepatitis C"
    ]
    with pytest.raises(InvalidCorpus) as fault:
        normalize_private_terms(["HIV", "H\u00a0IV"], "casefold")
    assert fault.value.details == {"item": 1, "field": "private_terms", "same_as": 0}
    assert normalize_private_terms(["HIV", "H\u00a0IV"], "exact") == ["HIV", "H\u00a0IV"]

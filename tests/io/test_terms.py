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

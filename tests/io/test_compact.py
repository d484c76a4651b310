"""The core's transactions read back from a compact corpus (app/io/compact.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.core.model import Transaction
from app.io.compact import CorpusBuilder, Limits

WORDS = ("a", "b", "c", "HIV", "x1")

lines = st.lists(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join),
    min_size=1,
    max_size=300,
)


def _built(text: list[str]):  # type: ignore[no-untyped-def]
    builder = CorpusBuilder(b"secret", Limits())
    assert builder.add_lines(text, 1, None) is None
    return builder.build()


@given(lines)
def test_lines_read_back_as_their_terms_in_order(text: list[str]) -> None:
    # More than one block of rows (the conversion works a block at a time) is covered by the
    # 70,000-line example below.
    corpus = _built(text)
    assert corpus.transactions() == [Transaction(frozenset(line.split())) for line in text]


def test_equal_rows_share_one_transaction_across_blocks() -> None:
    # Without individuals or cluster labels equal rows are equal transactions: one object
    # each, whatever block of rows they are read in. (Rows spelt in another order, such as
    # "b a", are equal transactions too, and may be objects of their own.)
    text = ["a b", "c", "a b"] * 70_000
    out = _built(text).transactions()
    assert len(out) == 210_000
    assert out[0] == Transaction(frozenset({"a", "b"})) and out[1] == Transaction(frozenset("c"))
    assert len({id(t) for t in out}) == 2
    assert out[0] is out[2] is out[-1]


def test_a_remapped_dictionary_merges_spellings_within_a_row() -> None:
    corpus = _built(["hiv HIV b", "b"])
    terms = ["HIV" if t.casefold() == "hiv" else t for t in corpus.terms]
    assert corpus.transactions(terms) == [
        Transaction(frozenset({"HIV", "b"})),
        Transaction(frozenset({"b"})),
    ]

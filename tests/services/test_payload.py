"""A queued job's input (no database): the compact payload round trip, the earlier JSON
payload still read, and private terms matched when the job runs."""

from __future__ import annotations

import json
import zlib

from app.core.model import Transaction
from app.io.compact import CorpusBuilder, Limits
from app.services.identity import individual_key
from app.services.payload import decode_corpus, encode_corpus, publication_input


def _corpus() -> CorpusBuilder:
    builder = CorpusBuilder(b"secret", Limits())
    builder.add(["theft", "hiv", "arson"], {"item": 0}, "p-1", "g1")
    builder.add(["theft", "HIV"], {"item": 1}, None, "g1")
    builder.add(["ＨＩＶ", "fraud"], {"item": 2}, "p-3", "g2")
    return builder


def test_round_trip() -> None:
    corpus = _corpus().build()
    decoded = decode_corpus(encode_corpus(corpus))
    assert decoded.transactions() == corpus.transactions()
    assert decoded.transactions()[0] == Transaction(
        frozenset({"theft", "hiv", "arson"}), individual_key(b"secret", "p-1"), "g1"
    )
    assert decoded.transactions()[1].individual is None


def test_earlier_payloads_are_read() -> None:
    key = individual_key(b"secret", "p-1")
    old = zlib.compress(
        json.dumps({"t": [["a", "b"], ["c"]], "i": [key, None], "c": None}).encode()
    )
    assert decode_corpus(old).transactions() == [
        Transaction(frozenset({"a", "b"}), key),
        Transaction(frozenset({"c"})),
    ]


def test_publication_input_matches_private_terms_as_of_the_job() -> None:
    corpus = _corpus().build()
    transactions, private, warnings = publication_input(corpus, ["HIV"], ["Fraud"], "casefold")
    assert private == {"HIV", "Fraud"}
    assert [sorted(t.terms) for t in transactions] == [
        ["HIV", "arson", "theft"],
        ["HIV", "theft"],
        ["Fraud", "HIV"],
    ]
    assert {w["term"] for w in warnings} == {"hiv", "ＨＩＶ", "fraud"}
    exact, private, warnings = publication_input(corpus, ["HIV"], [], "exact")
    assert sorted(exact[0].terms) == ["arson", "hiv", "theft"]
    assert {(w["term"], w["treated_as"]) for w in warnings} == {
        ("hiv", "public"),
        ("ＨＩＶ", "public"),
    }

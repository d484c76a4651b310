"""A queued job's transient input, and what the core publishes from it.

The payload is a :mod:`app.io.compact` corpus (term ids, a dictionary, keyed individuals).
Payloads of the earlier format (zlib'd JSON ``{"t": [[terms...]], "i": [...], "c": [...]}``)
are still read, so that jobs queued before an upgrade run after it.

Private terms are matched when the job runs, not when the body is read: a release posted
while an earlier one (adding a private term) waits in the queue must see that term private.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable

from app.core.model import Transaction
from app.io.compact import MAGIC, CompactCorpus, CorpusBuilder, Limits, decode, encode
from app.io.terms import PrivateMatch, PrivateMatcher, absent_private_terms

__all__ = ["encode_corpus", "decode_corpus", "match_private_terms", "publication_input"]


def encode_corpus(corpus: CompactCorpus) -> bytes:
    return encode(corpus)


def decode_corpus(payload: bytes) -> CompactCorpus:
    if payload.startswith(MAGIC):
        return decode(payload)[0]
    return _legacy(payload)


def _legacy(payload: bytes) -> CompactCorpus:
    data = json.loads(zlib.decompress(payload))
    n = len(data["t"])
    builder = CorpusBuilder(
        b"",
        Limits(
            max_transactions=n + 1,
            max_terms_per_transaction=1 << 30,
            max_distinct_terms=1 << 30,
            max_terms_per_release=1 << 40,
        ),
    )
    clusters = data["c"] or [None] * n
    for k, terms in enumerate(data["t"]):
        builder.add(terms, {"item": k}, None, clusters[k])
    corpus = builder.build()
    if data["i"]:
        # Already keyed (hex HMAC) when the job was created: keep the keys as they are.
        corpus.individuals = b"".join(bytes.fromhex(i) if i else bytes(32) for i in data["i"])
    return corpus


def publication_input(
    corpus: CompactCorpus,
    series_terms: Iterable[str],
    extra_terms: Iterable[str],
    mode: PrivateMatch,
) -> tuple[list[Transaction], frozenset[str], list[dict[str, str]]]:
    """The core's transactions, the private terms of this release and the warnings.

    Under ``casefold`` every spelling of a private term (case, width, accents, look-alike
    letters) becomes that private term, so it is published as one; ``exact`` keeps spellings
    apart but those that look the same. Either way a spelling that folds onto a private term
    is reported (``warnings``), and so is a private term the snapshot never names.
    """
    terms, private, warnings = match_private_terms(corpus, series_terms, extra_terms, mode)
    return corpus.transactions(terms), private, warnings


def match_private_terms(
    corpus: CompactCorpus,
    series_terms: Iterable[str],
    extra_terms: Iterable[str],
    mode: PrivateMatch,
) -> tuple[list[str], frozenset[str], list[dict[str, str]]]:
    """The corpus' dictionary with every spelling of a private term written as that term,
    this release's private terms, and the warnings about terms (what the publisher is told
    when the snapshot is posted, and again by the job)."""
    series_terms = list(series_terms)
    extra = PrivateMatcher(series_terms, mode).canonical_private(extra_terms)
    private = frozenset(series_terms) | frozenset(extra)
    terms, folds = PrivateMatcher(private, mode).remap(corpus.terms)
    warnings = [w.as_dict() for w in folds] + absent_private_terms(sorted(private), terms)
    return terms, private, warnings

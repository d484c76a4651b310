"""The transient encoding of a queued job's corpus (individuals already keyed).

zlib-compressed JSON: ``{"t": [[terms...], ...], "i": [...] | null, "c": [...] | null}``.
"""

from __future__ import annotations

import json
import zlib

from app.core.model import Transaction

__all__ = ["encode_corpus", "decode_corpus"]


def encode_corpus(corpus: list[Transaction]) -> bytes:
    data = {
        "t": [sorted(t.terms) for t in corpus],
        "i": [t.individual for t in corpus] if any(t.individual for t in corpus) else None,
        "c": [t.cluster for t in corpus] if any(t.cluster for t in corpus) else None,
    }
    return zlib.compress(json.dumps(data, separators=(",", ":")).encode(), level=1)


def decode_corpus(payload: bytes) -> list[Transaction]:
    data = json.loads(zlib.decompress(payload))
    n = len(data["t"])
    individuals = data["i"] or [None] * n
    clusters = data["c"] or [None] * n
    return [
        Transaction(frozenset(terms), individual, cluster)
        for terms, individual, cluster in zip(data["t"], individuals, clusters, strict=True)
    ]

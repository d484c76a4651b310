"""``tlost``: the thesis's information-loss metric for disassociation (3.4)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from app.core.disassociation.model import Disassociation
from app.core.model import Transaction

__all__ = ["tlost"]


def tlost(corpus: Sequence[Transaction], result: Disassociation) -> float:
    """Share of the terms frequent in the corpus that end up in a term chunk (thesis 3.4).

    A term is *frequent* when its support in the whole corpus is at least ``k`` (the thesis
    says "more than k"; at least ``k`` is the k^m-anonymity threshold, decision); it is *lost*
    when some cluster publishes it in its term chunk, where nothing links it to the other
    terms of its records. Suppressed records lose their terms differently and are not counted
    (the thesis notes the same for its suppression strategy). 0.0 when no term is frequent.

    >>> from app.core.disassociation import disassociate, DisassociationParams
    >>> c = [Transaction.of(["a", "b"]), Transaction.of(["a", "b"]), Transaction.of(["a", "c"])]
    >>> tlost(c, disassociate(c, DisassociationParams(k=2, max_cluster_size=4)))
    0.0
    """
    support = Counter(t for record in corpus for t in record.terms)
    frequent = {t for t, n in support.items() if n >= result.params.k}
    if not frequent:
        return 0.0
    in_term_chunks: set[str] = set().union(*(c.term_chunk for c in result.clusters))
    lost = frequent & in_term_chunks
    return len(lost) / len(frequent)

"""Vertical partitioning: record chunks that are k^m-anonymous and a term chunk (thesis
3.2.2, 3.3.3; Definition 2).

Terms of support below ``k`` in the cluster go to the term chunk ``C_T``. The others, by
support (descending, ties by term), fill record chunks ``C_1 ... C_n`` greedily: a term
joins the chunk being built when the chunk's sub-records stay k^m-anonymous with it, else
it waits for a later chunk. Adding a term changes only the combinations that contain it, so
only those are counted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import combinations

from app.core.disassociation.params import VerticalMethod

__all__ = ["build_chunks", "is_km_anonymous", "vertical_partition"]


def is_km_anonymous(subrecords: Iterable[frozenset[str]], k: int, m: int) -> bool:
    """Whether every combination of 1 to ``m`` terms that occurs in ``subrecords`` occurs at
    least ``k`` times (Definition 1; empty sub-records show nothing).

    >>> is_km_anonymous([frozenset({"a", "b"}), frozenset({"a", "b"}), frozenset({"a"})], 2, 2)
    True
    >>> is_km_anonymous([frozenset({"a", "b"}), frozenset({"a"})], 2, 2)
    False
    """
    counts: Counter[tuple[str, ...]] = Counter()
    for record in subrecords:
        terms = sorted(record)
        for size in range(1, min(m, len(terms)) + 1):
            counts.update(combinations(terms, size))
    return all(c >= k for c in counts.values())


def _fits(
    records: Sequence[frozenset[str]],
    chunk: list[str],
    term: str,
    k: int,
    m: int,
    method: VerticalMethod,
) -> bool:
    """Whether ``chunk + [term]`` stays k^m-anonymous, counting only combinations with
    ``term`` (the others do not change)."""
    if method == "all_combinations":
        # Table 3.7: every combination of the chunk's terms with ``term`` must occur k times.
        for size in range(0, min(m - 1, len(chunk)) + 1):
            for rest in combinations(chunk, size):
                wanted = {term, *rest}
                if sum(1 for r in records if wanted <= r) < k:
                    return False
        return True
    counts: Counter[tuple[str, ...]] = Counter()
    domain = set(chunk)
    for record in records:
        if term in record:
            seen = sorted(record & domain)
            for size in range(0, min(m - 1, len(seen)) + 1):
                counts.update(combinations(seen, size))
    return all(c >= k for c in counts.values())


def build_chunks(
    records: Sequence[frozenset[str]], terms: Iterable[str], k: int, m: int, method: VerticalMethod
) -> list[frozenset[str]]:
    """Term sets of record chunks over ``records`` for the candidate ``terms`` (each of
    support at least ``k``), first chunk first; the first chunk is the anchoring chunk ``C_1``
    of the attack (thesis 4.2.1)."""
    support = Counter(t for r in records for t in r)
    remaining = sorted(set(terms), key=lambda t: (-support[t], t))
    chunks: list[frozenset[str]] = []
    while remaining:
        chunk: list[str] = []
        for term in remaining:
            if _fits(records, chunk, term, k, m, method):
                chunk.append(term)
        if not chunk:  # only when a candidate has support below k
            break
        chunks.append(frozenset(chunk))
        taken = set(chunk)
        remaining = [t for t in remaining if t not in taken]
    return chunks


def vertical_partition(
    records: Sequence[frozenset[str]], k: int, m: int, method: VerticalMethod = "shared"
) -> tuple[list[frozenset[str]], frozenset[str]]:
    """Record-chunk term sets and the term chunk of one cluster (thesis 3.2.2).

    Parameters
    ----------
    records:
        The cluster's transactions.
    k, m:
        k^m-anonymity of the record chunks (Definition 1).
    method:
        ``shared`` (Table 3.8) or ``all_combinations`` (Table 3.7).

    Returns
    -------
    tuple
        The record chunks' term sets (``C_1`` first) and the term chunk ``C_T``.

    Examples
    --------
    Table 3.4 with k = m = 2 (Table 3.8: *surgery* and *failure* share a chunk):

    >>> p2 = [{"kidney", "infection", "failure", "sepsis"},
    ...       {"kidney", "surgery", "catheterisation"},
    ...       {"kidney", "infection", "surgery"}, {"infection", "failure", "dialysis"}]
    >>> chunks, term_chunk = vertical_partition([frozenset(r) for r in p2], 2, 2)
    >>> [sorted(c) for c in chunks], sorted(term_chunk)
    ([['infection', 'kidney'], ['failure', 'surgery']], ['catheterisation', 'dialysis', 'sepsis'])
    """
    support = Counter(t for r in records for t in r)
    frequent = [t for t, c in support.items() if c >= k]
    term_chunk = frozenset(t for t, c in support.items() if c < k)
    return build_chunks(records, frequent, k, m, method), term_chunk

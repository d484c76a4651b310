"""Tracing published rows to the raw transactions they came from, when individuals cannot.

The ledger names each true row's individual (:class:`~app.core.model.ClusterLedger`), so a
corpus with a unique individual on every transaction is traced exactly
(:func:`~app.core.attacks.anony_measures.row_sources`). FIMI files and text uploads name
none. A true row is then traced by its content: it is the non-private set of its
transaction, and a private term is on no public row, so the row equals the transaction's
terms that occur on some row of the release. Equal rows within a cluster cannot be told
apart by the attacker either (the same scores), so any matching among them measures the
same; equal rows in *different* clusters can be matched to the wrong cluster's transaction,
and are counted (``ambiguous``) so a report can say how far to trust it.
"""

from __future__ import annotations

from collections import Counter, defaultdict, deque
from collections.abc import Sequence
from dataclasses import replace

from app.core.errors import InvalidCorpus
from app.core.model import PublishedRelease, ReleaseLedger, Row, Transaction, make_row

__all__ = ["trace_by_content"]


def trace_by_content(
    corpus: Sequence[Transaction], release: PublishedRelease, ledger: ReleaseLedger
) -> tuple[list[Transaction], ReleaseLedger, int]:
    """The corpus with synthetic unique individuals (``#position``), the ledger naming them
    on the true rows, and the number of true rows whose content occurs in several clusters.

    Raises :class:`~app.core.errors.InvalidCorpus` when a true row matches no transaction
    left (a generalised row, Kanony's taxonomy, or a corpus that is not the release's).

    >>> from app.core.model import ClusterLedger, release_from_counts
    >>> raw = [Transaction.of(["a", "HIV"]), Transaction.of(["b"])]
    >>> r = release_from_counts(1, [([("b",), ("a",), ("c",)], {"HIV": 1}, {}, 1)], {}, {})
    >>> _, led, ambiguous = trace_by_content(raw, r, ReleaseLedger([ClusterLedger([2])]))
    >>> led.clusters[0].individuals, ambiguous
    (['#1', '#0', None], 0)
    """
    vocabulary = {term for cluster in release.clusters for row in cluster.rows for term in row}
    pool: dict[Row, deque[int]] = defaultdict(deque)
    for position, transaction in enumerate(corpus):
        pool[make_row(transaction.terms & vocabulary)].append(position)
    homes: Counter[Row] = Counter()
    for cluster, book in zip(release.clusters, ledger.clusters, strict=True):
        fake = set(book.counterfeit_rows)
        homes.update({row for p, row in enumerate(cluster.rows) if p not in fake})
    clusters = []
    ambiguous = 0
    for cluster, book in zip(release.clusters, ledger.clusters, strict=True):
        fake = set(book.counterfeit_rows)
        individuals: list[str | None] = []
        for p, row in enumerate(cluster.rows):
            if p in fake:
                individuals.append(None)
                continue
            if not pool[row]:
                raise InvalidCorpus(
                    "a published row matches no transaction of the corpus",
                    {"cluster": cluster.cluster_id, "row": p},
                )
            individuals.append(f"#{pool[row].popleft()}")
            ambiguous += homes[row] > 1
        clusters.append(replace(book, individuals=individuals))
    traced = [Transaction(t.terms, f"#{i}", t.cluster) for i, t in enumerate(corpus)]
    return traced, replace(ledger, clusters=clusters), ambiguous

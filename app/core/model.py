"""Core data types: corpora, published releases and the private ledger kept beside them.

A *row* is the published non-private set of a transaction (``C^S̄`` in the paper), kept as a
sorted tuple of terms so that it is hashable, canonical and JSON friendly.

The public release (design.md §3) and the private ledger (which rows are counterfeits, FP2
counts) are separate types on purpose: code that renders a release for analysts only ever sees
:class:`PublishedRelease`, which has no field that could leak a counterfeit flag.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

__all__ = [
    "Row",
    "Transaction",
    "make_row",
    "PublishedCluster",
    "PublishedRelease",
    "ClusterLedger",
    "ReleaseLedger",
    "Publication",
    "PublicLayout",
]

_Extra = TypeVar("_Extra")

Row = tuple[str, ...]


def make_row(terms: Iterable[str]) -> Row:
    """Return the canonical row of a set of terms (sorted, without repeats).

    >>> make_row(["theft", "arson", "theft"])
    ('arson', 'theft')
    """
    return tuple(sorted(set(terms)))


@dataclass(frozen=True, slots=True)
class Transaction:
    """One record of a raw snapshot: a set of terms, an optional pseudonym and cluster label."""

    terms: frozenset[str]
    individual: str | None = None
    cluster: str | None = None

    @classmethod
    def of(
        cls, terms: Iterable[str], individual: str | None = None, cluster: str | None = None
    ) -> Transaction:
        return cls(frozenset(terms), individual, cluster)


@dataclass(slots=True)
class PublishedCluster:
    """A published cluster ``C* = {C^S̄, C_c, C_ol}`` (design.md §2, step 5).

    Attributes
    ----------
    cluster_id:
        Stable label within the release (``c1``, ``c2``, ...).
    rows:
        Non-private sets of its rows, counterfeits included, in a shuffled order.
    private_counts:
        ``N(s, C_c)``, copies of each private term in the cluster private segment.
    global_share:
        ``N(s, C_ol) = J_s(C)``, the cluster's estimated share of the global bag (formula 3).
    counterfeits:
        Counterfeit rows added by BP and FP1 (published on purpose, section 3.2).
    """

    cluster_id: str
    rows: list[Row]
    private_counts: dict[str, int] = field(default_factory=dict)
    global_share: dict[str, int] = field(default_factory=dict)
    counterfeits: int = 0

    @property
    def size(self) -> int:
        """``N(C*)``."""
        return len(self.rows)

    def n_s(self, term: str) -> int:
        """``N(s, C*) = N(s, C_c) + N(s, C_ol)`` (Definition 4)."""
        return self.private_counts.get(term, 0) + self.global_share.get(term, 0)

    def private_terms(self) -> set[str]:
        """Terms with a non-zero ``N(s, C*)``."""
        return {s for s in (*self.private_counts, *self.global_share) if self.n_s(s) > 0}


class PublicLayout(Protocol):
    """A method's own public release when it publishes no Anony-style rows (disassociation's
    chunks). Its JSON has a ``clusters`` list, one NDJSON line each; the rest is the first
    line."""

    def to_json(self) -> dict[str, Any]: ...

    @property
    def n_records(self) -> int:
        """Records the release covers (its clusters' sizes), what ``n_rows`` counts."""
        ...

    @property
    def n_clusters(self) -> int:
        """Clusters it publishes."""
        ...


@dataclass(slots=True)
class PublishedRelease:
    """The public view of one release (design.md §3).

    ``population_rates`` are ``ss(s, T^μ)``, fixed after FP1 (section 3.2.1); they are what the
    adversary divides by in formula 15, so risk is always computed against them.
    """

    release_no: int
    clusters: list[PublishedCluster]
    global_bag: dict[str, int]
    population_rates: dict[str, float]
    private_terms: frozenset[str] = frozenset()
    global_counterfeits: int = 0
    label: str | None = None
    #: Published in place of ``clusters`` (then empty) by a method with its own layout.
    layout: PublicLayout | None = None
    #: Every counterfeit row of the release, BP's, FP1's, FP2's and the repair's (so that
    #: every counterfeit counted in a public figure), as one release-level total. Each cluster
    #: publishes only BP + FP1's (design.md §3): per cluster, FP2's s̄-counterfeits would tell the
    #: adversary how many rows to discount. ``None`` for a release stored before
    #: the total was kept (its readers fall back on the clusters' counts).
    counterfeit_rows: int | None = None
    #: Whether the release escalated to suppression beyond ``max_suppression``:
    #: public, so that an analyst's interval on a count knows its upper bound is gone.
    suppression_beyond_budget: bool = False

    @property
    def n_rows(self) -> int:
        """Published rows; for a method with its own layout, the records it covers (a
        release list counts what a release publishes, rows or records)."""
        if self.layout is not None:
            return self.layout.n_records
        return sum(c.size for c in self.clusters)

    @property
    def n_clusters(self) -> int:
        """Published clusters, the layout's for a method with its own."""
        if self.layout is not None:
            return self.layout.n_clusters
        return len(self.clusters)

    def term_totals(self) -> Counter[str]:
        """All copies of each private term: cluster segments plus global bag (section 2.3.2)."""
        totals: Counter[str] = Counter()
        for cluster in self.clusters:
            totals.update({s: n for s, n in cluster.private_counts.items() if n})
        totals.update({s: n for s, n in self.global_bag.items() if n})
        return totals

    def row_counts(self) -> Counter[Row]:
        counts: Counter[Row] = Counter()
        for cluster in self.clusters:
            counts.update(cluster.rows)
        return counts

    def cluster(self, cluster_id: str) -> PublishedCluster:
        for cluster in self.clusters:
            if cluster.cluster_id == cluster_id:
                return cluster
        raise KeyError(cluster_id)


@dataclass(slots=True)
class ClusterLedger:
    """What the publisher knows of a cluster and never publishes.

    ``counterfeit_rows`` are indexes into ``PublishedCluster.rows``; ``fp2`` counts the
    counterfeits FP2 and the post-condition loop added (not published, Definition 17).
    ``bp``/``fp1`` are the published split of ``PublishedCluster.counterfeits``.
    """

    counterfeit_rows: list[int] = field(default_factory=list)
    bp: int = 0
    fp1: int = 0
    fp2: int = 0
    individuals: list[str | None] = field(default_factory=list)
    #: Copies suppressed from this cluster's segment (design.md §5); the bag's are only in the
    #: release's total (:attr:`ReleaseLedger.suppressed`).
    suppressed: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class ReleaseLedger:
    """Private side of a release: per-cluster ledgers (same order as the clusters)."""

    clusters: list[ClusterLedger]
    global_bag_counterfeits: dict[str, int] = field(default_factory=dict)
    suppressed: dict[str, int] = field(default_factory=dict)
    #: Where the release's random choices came from, enough to reproduce them
    #: (:func:`app.core.randomness.randomness_record`): ``{"source": "secret", "secret":
    #: hex}`` or ``{"source": "publisher_seed", "seed": n}``. Never published.
    randomness: dict[str, object] = field(default_factory=dict)

    @property
    def counterfeit_rows(self) -> int:
        return sum(len(c.counterfeit_rows) for c in self.clusters)

    def totals_only(self) -> ReleaseLedger:
        """This ledger without its per-cluster part: what a later publication reads of a past
        ledger (Sanony's series suppression budget, Kanony's bag counterfeits). The clusters'
        part (each row's individual among them) is the most of a ledger's memory, about a
        fifth of a past release's in a process that publishes a long series."""
        return ReleaseLedger(
            [], dict(self.global_bag_counterfeits), dict(self.suppressed), dict(self.randomness)
        )


@dataclass(slots=True)
class Publication:
    """The result of publishing one corpus: the public release, its ledger and a report."""

    release: PublishedRelease
    ledger: ReleaseLedger
    report: dict[str, object] = field(default_factory=dict)
    #: What one method hands its own package beside the release, of a type its core module
    #: defines (Wong's statistics update, Inv's signatures, disassociation's alignment of
    #: chunks and records). The core's publication knows only that there may be some: read it
    #: with :meth:`extra` and the method's type.
    extras: object | None = None

    def extra(self, kind: type[_Extra]) -> _Extra | None:
        """:attr:`extras` when it is a ``kind``, else ``None``.

        >>> Publication(PublishedRelease(1, [], {}, {}), ReleaseLedger([]), extras=3).extra(int)
        3
        """
        return self.extras if isinstance(self.extras, kind) else None


def release_from_counts(
    release_no: int,
    clusters: Sequence[tuple[Sequence[Row], Mapping[str, int], Mapping[str, int], int]],
    global_bag: Mapping[str, int],
    population_rates: Mapping[str, float],
) -> PublishedRelease:
    """Build a release from plain tuples ``(rows, private_counts, global_share, counterfeits)``.

    Handy for tests and for loading a stored release.
    """
    return PublishedRelease(
        release_no=release_no,
        clusters=[
            PublishedCluster(f"c{i + 1}", list(rows), dict(pc), dict(gs), cf)
            for i, (rows, pc, gs, cf) in enumerate(clusters)
        ],
        global_bag=dict(global_bag),
        population_rates=dict(population_rates),
    )

"""Inv: m-invariance (Xiao & Tao, SIGMOD 2007) as the Sanony paper adapts it (design.md §9; 4.3).

The baseline that Sanony's counterfeit rate is compared with. Each transaction has one
*sensitive value*: its private set concatenated (``"HIV|cancer"``, terms sorted, ``|`` and
``\\`` escaped with ``\\``), or NULL (the empty string ``""``, which no non-empty set gives)
when it has no private term; NULL is a sensitive value like any other (Example 3).

An individual's *signature* is the set of values of its published cluster. m-invariance holds
when every cluster holds at least m distinct values, the same number of copies of each, and
an individual keeps its first signature in every release it appears in (here: for good, also
after an absence; the original requires it over a continuous lifespan). Buckets are built by
:func:`app.core.variants.inv_buckets.plan_groups`; counterfeit rows complete signatures.

Publication is anatomy-style: a cluster's rows are its members' non-private sets (counterfeits
included, shuffled) and its ``private_counts`` count each *value*, the concatenated string
being the key, so the public view keeps the shape of the other methods'; no global bag, no
global share. As in the original, the number of counterfeits of each cluster is published.
"""

from __future__ import annotations

import itertools
import math
import random
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from app.core.errors import PublicationFailed
from app.core.history import SeriesHistory
from app.core.model import (
    ClusterLedger,
    Publication,
    PublishedCluster,
    PublishedRelease,
    ReleaseLedger,
    Row,
    Transaction,
    make_row,
)
from app.core.params import PublishParams
from app.core.progress import Progress, ProgressCallback
from app.core.randomness import mechanism_random
from app.core.validation import individual_keys
from app.core.variants.inv_buckets import BALANCING, ELIGIBILITY, Plan, Slot, plan_groups

__all__ = [
    "NULL_VALUE",
    "SignaturesUpdate",
    "publish_inv",
    "sensitive_value",
    "signatures_of",
    "signatures_update",
]


@dataclass(frozen=True, slots=True)
class SignaturesUpdate:
    """What an Inv publication sets in ``SeriesHistory.signatures``: individual key ->
    signature (the private values its bucket must keep in every later release,
    m-invariance). The publication's :attr:`~app.core.model.Publication.extras`."""

    signatures: dict[str, frozenset[str]] = field(default_factory=dict)


def signatures_update(publication: Publication) -> dict[str, frozenset[str]]:
    """The signatures a publication sets (none for another method's)."""
    update = publication.extra(SignaturesUpdate)
    return update.signatures if update is not None else {}


#: The sensitive value of a transaction without private terms.
NULL_VALUE = ""

_ESCAPES = str.maketrans({"\\": "\\\\", "|": "\\|"})
_TRIES = 8


def sensitive_value(private: Iterable[str]) -> str:
    """The one sensitive value of a private set: terms sorted and joined by ``|``.

    ``|`` and ``\\`` inside a term are escaped, so two different sets never share a value.

    >>> sensitive_value(["herpes", "HIV"]), sensitive_value([])
    ('HIV|herpes', '')
    >>> sensitive_value(["a|b"]) == sensitive_value(["a", "b"])
    False
    """
    return "|".join(sorted(term.translate(_ESCAPES) for term in set(private)))


def signatures_of(release: PublishedRelease, ledger: ReleaseLedger) -> dict[str, frozenset[str]]:
    """Individual key -> signature (values of its cluster) of one release, from its ledger.

    >>> from app.core.model import ClusterLedger, PublishedCluster
    >>> release = PublishedRelease(1, [PublishedCluster("c1", [("a",), ("b",)],
    ...                            {"": 1, "HIV": 1})], {}, {})
    >>> signatures_of(release, ReleaseLedger([ClusterLedger([], individuals=["p1", None])]))
    {'p1': frozenset({'', 'HIV'})}
    """
    found: dict[str, frozenset[str]] = {}
    for cluster, led in zip(release.clusters, ledger.clusters, strict=True):
        signature = frozenset(v for v, n in cluster.private_counts.items() if n > 0)
        for key in led.individuals:
            if key is not None:
                found[key] = signature
    return found


def publish_inv(
    history: SeriesHistory,
    corpus: Sequence[Transaction],
    private_terms: frozenset[str],
    params: PublishParams,
    progress: ProgressCallback | None = None,
) -> Publication:
    """Publish ``corpus`` as the next release of an m-invariant series (design.md §9).

    Parameters
    ----------
    history:
        Earlier releases; only ``history.signatures`` is read.
    corpus:
        One transaction per individual (``individual`` required, a keyed hash in the service).
    private_terms:
        The series' private terms; a transaction's value is its private set concatenated.
    params:
        ``m`` (distinct values per cluster, default 2), ``cluster_size`` (a cluster is a run of
        ``ceil(cluster_size / |signature|)`` m-unique groups of one bucket, the last run taking
        a shorter remainder), ``seed`` (counterfeit values and rows, row order).

    Returns
    -------
    Publication
        Its :class:`SignaturesUpdate` (:func:`signatures_update`) maps every published
        individual to its signature; the ledger
        counts counterfeits completing persisting signatures as ``bp`` and those completing
        new groups as ``fp1``, and suppressed rows by value in ``suppressed``.

    Raises
    ------
    InvalidCorpus
        A transaction without ``individual``, or an individual twice.
    PublicationFailed
        Fewer than m distinct values exist at all, or the post-condition fails.
    """
    report = Progress(progress)
    started = time.perf_counter()
    release_no = history.next_release_no
    seed = params.randomness_key(release_no)
    report("anony", 0.0)
    keys = individual_keys(corpus, "inv")
    rows = [make_row(t.terms - private_terms) for t in corpus]
    values = [sensitive_value(t.terms & private_terms) for t in corpus]
    order = _similarity_order(rows)
    # Values a counterfeit may carry when the corpus has fewer than m: NULL, single terms.
    extra = [NULL_VALUE, *(sensitive_value([term]) for term in private_terms)]
    plan = plan_groups(keys, values, order, history.signatures, params.m, extra, seed)
    report("fp1", 1.0)
    rank = [0] * len(order)
    for r, i in enumerate(order):
        rank[i] = r
    release, ledger = _assemble(release_no, plan, rows, keys, rank, params.cluster_size, seed)
    release.private_terms = private_terms
    ledger.suppressed = dict(sorted(Counter(values[i] for i in plan.suppressed).items()))
    report("verify", 0.0)
    update = signatures_of(release, ledger)
    _verify(release, ledger, history.signatures, params.m, len(corpus) - len(plan.suppressed))
    report("verify", 1.0)
    return Publication(
        release,
        ledger,
        _summary(release, ledger, plan, params, corpus, started),
        extras=SignaturesUpdate(update),
    )


def _similarity_order(rows: Sequence[Row]) -> list[int]:
    """Positions sorted by their terms ranked by frequency (as
    :mod:`app.core.anonymisation.clustering`)."""
    frequency = Counter(t for row in rows for t in row)
    rank = {
        t: r for r, (t, _) in enumerate(sorted(frequency.items(), key=lambda kv: (-kv[1], kv[0])))
    }
    keys = [tuple(sorted(rank[t] for t in row)) for row in rows]
    return sorted(range(len(rows)), key=lambda i: (keys[i], i))


def _runs(groups: list[list[Slot]], per_cluster: int) -> list[list[list[Slot]]]:
    """Consecutive runs of ``per_cluster`` groups; the last run absorbs a shorter remainder."""
    runs = [groups[i : i + per_cluster] for i in range(0, len(groups), per_cluster)]
    if len(runs) > 1 and len(runs[-1]) < per_cluster:
        runs[-2].extend(runs.pop())
    return runs


def _assemble(
    release_no: int,
    plan: Plan,
    rows: Sequence[Row],
    keys: Sequence[str],
    rank: Sequence[int],
    cluster_size: int,
    seed: str,
) -> tuple[PublishedRelease, ReleaseLedger]:
    """Cut each bucket, its groups in similarity order, into clusters."""
    rng = mechanism_random(seed, "inv")
    clusters: list[PublishedCluster] = []
    ledgers: list[ClusterLedger] = []
    totals: Counter[str] = Counter()
    for signature in sorted(plan.buckets, key=sorted):
        per_cluster = max(1, math.ceil(cluster_size / len(signature)))
        groups = sorted(plan.buckets[signature], key=lambda g: min(rank[i] for _, i in g if i >= 0))
        for run in _runs(groups, per_cluster):
            slots = [slot for group in run for slot in group]
            cluster, led = _cluster(f"c{len(clusters) + 1}", slots, rows, keys, rng)
            totals.update(cluster.private_counts)
            clusters.append(cluster)
            ledgers.append(led)
    n_rows = sum(c.size for c in clusters)
    release = PublishedRelease(
        release_no=release_no,
        clusters=clusters,
        global_bag={},
        population_rates={v: totals[v] / n_rows for v in sorted(totals)},
    )
    return release, ReleaseLedger(clusters=ledgers)


def _cluster(
    cluster_id: str,
    slots: list[Slot],
    rows: Sequence[Row],
    keys: Sequence[str],
    rng: random.Random,
) -> tuple[PublishedCluster, ClusterLedger]:
    """One published cluster: true rows, counterfeit rows from its terms, shuffled."""
    true_rows = [rows[i] for _, i in slots if i >= 0]
    pool = Counter(t for row in true_rows for t in row)
    taken = set(true_rows)
    entries: list[tuple[Row, str | None]] = []
    for _, member in slots:
        if member >= 0:
            entries.append((rows[member], keys[member]))
        else:
            entries.append((_counterfeit_row(pool, true_rows, taken, rng), None))
    order = list(range(len(entries)))
    rng.shuffle(order)
    counts = Counter(value for value, _ in slots)
    kinds = Counter(member for _, member in slots if member < 0)
    cluster = PublishedCluster(
        cluster_id=cluster_id,
        rows=[entries[i][0] for i in order],
        private_counts=dict(sorted(counts.items())),
        counterfeits=kinds[BALANCING] + kinds[ELIGIBILITY],
    )
    ledger = ClusterLedger(
        counterfeit_rows=[p for p, i in enumerate(order) if entries[i][1] is None],
        bp=kinds[BALANCING],
        fp1=kinds[ELIGIBILITY],
        individuals=[entries[i][1] for i in order],
    )
    return cluster, ledger


def _counterfeit_row(
    pool: Counter[str], true_rows: Sequence[Row], taken: set[Row], rng: random.Random
) -> Row:
    """A counterfeit row: terms drawn from the cluster's term multiset in proportion to their
    counts, as many as a random true row has; identical to no row of the cluster when some
    size allows it (Definition 14's intent), trying shorter rows before giving up."""
    if not pool:
        return ()
    terms = sorted(pool)
    cumulative = list(itertools.accumulate(pool[t] for t in terms))
    first = min(max(len(rng.choice(true_rows)), 1), len(terms))
    row: Row = ()
    for size in (first, *range(first - 1, 0, -1)):
        for _ in range(_TRIES):
            drawn: set[str] = set()
            for term in rng.choices(terms, cum_weights=cumulative, k=4 * size):
                drawn.add(term)
                if len(drawn) == size:
                    break
            row = make_row(drawn)
            if row not in taken:
                taken.add(row)
                return row
    return row


def _verify(
    release: PublishedRelease,
    ledger: ReleaseLedger,
    signatures: Mapping[str, frozenset[str]],
    m: int,
    expected: int,
) -> None:
    """Post-condition: balanced clusters of m values holding true rows; old signatures kept;
    every row that is not suppressed published once."""
    published = 0
    for cluster, led in zip(release.clusters, ledger.clusters, strict=True):
        signature = frozenset(cluster.private_counts)
        members = [key for key in led.individuals if key is not None]
        published += len(members)
        old = [signatures[key] for key in members if key in signatures]
        balanced = len(set(cluster.private_counts.values())) == 1
        # A signature from a release with a smaller m stays: invariance comes first.
        diverse = len(signature) >= m or signature in old
        if not (members and balanced and diverse):
            raise PublicationFailed(
                f"cluster {cluster.cluster_id} is not m-unique: {cluster.private_counts}",
                {"cluster": cluster.cluster_id},
            )
        if any(o != signature for o in old):
            raise PublicationFailed(
                f"cluster {cluster.cluster_id}: an individual's signature changed",
                {"cluster": cluster.cluster_id},
            )
    if published != expected:
        raise PublicationFailed(
            f"{published} true rows published for {expected} expected",
            {"published": published, "expected": expected},
        )


def _summary(
    release: PublishedRelease,
    ledger: ReleaseLedger,
    plan: Plan,
    params: PublishParams,
    corpus: Sequence[Transaction],
    started: float,
) -> dict[str, object]:
    balancing = sum(led.bp for led in ledger.clusters)
    eligibility = sum(led.fp1 for led in ledger.clusters)
    counterfeits = balancing + eligibility
    return {
        "method": "inv",
        "m": params.m,
        "buckets": len(plan.buckets),
        "clusters": len(release.clusters),
        "rows": release.n_rows,
        "true_rows": len(corpus) - len(plan.suppressed),
        "persisting": plan.persisting,
        "new": plan.fresh,
        "counterfeits": counterfeits,
        "counterfeits_by_phase": {"balancing": balancing, "eligibility": eligibility},
        "counterfeit_rate": round(counterfeits / max(release.n_rows, 1), 6),
        "suppressed": len(plan.suppressed),
        "client_clusters_ignored": corpus[0].cluster is not None,
        "seconds": {"inv": round(time.perf_counter() - started, 4)},
    }

"""sComp: (d, α)-linkability by merging clusters (design.md §8; ``papers/scomp-sattar.tex``).

The adversary of Sattar et al. holds *independent* releases of other publishers drawn from the
same population and intersects the private terms of a victim's groups across them (composition
attack, Definitions "Privacy Breach" and "Effective anonymity"). A release is safe for a group
E when, with confidence α, another release's group of the same people shares at least d of
E's distinct private terms S(E) (Definition "(d, α)-linkable"). With the publisher's only
knowledge, the population rates, the chance that a hypothesised release of n records holds s
in E's group is (record probability and binomial draws, section 3)

    ρ_s = (N(E)/N(T))·ss(s, T),   P(E, s) = 1 − (1 − ρ_s)^n,

the chance that d given terms all appear is ``P(E, s^d) = Π P(E, s)``, the best d-subset of
S(E) is the d terms of largest P(E, s), and against N − 1 independent releases the bound is
``P(E, s^d)^(N−1)`` (section 6). A group *fails* when the bound is below α or ``|S(E)| < d``.

Algorithm 1 (sComp) merges every failing group with its nearest group and starts again until
no group fails. Here a group is an Anony cluster and S(E) its published private terms (cluster
segment plus global share); after each round of merges Anony's sanitisation is run again on
the new partition, so ``γ_s(C) <= r_th`` holds for the merged clusters too.

Decisions (the paper is written for generalisation-based k-anonymity, one sensitive value per
record, and publishers that do not coordinate):

- sComp runs on Anony's output only, with no BP/FP: it is the post-processing of one release's
  equivalence groups for the independent-publishers setting, not a serial mechanism, and it
  does not promise Sanony's serial preservation (risk endpoints still measure it).
- ``n`` is ``N(T)``: the paper assumes the other release has the size of this one.
- "Nearest" (Definition "Nearest Equivalence Group") is the highest Jaccard similarity of the
  clusters' non-private term sets, searched among the 3 live neighbours on each side in the
  clustering order (which already places similar clusters together), not over every pair; a
  cluster that already grew in the same round is taken only when the window holds no other.
- Merging one pair per failing cluster and round (Algorithm 1 taken literally) doubles cluster
  sizes each round and overshoots: on BMS-WebView-1 it ends with clusters about twice as large
  as needed. Instead, within a round a failing cluster keeps absorbing its nearest neighbour
  until it passes on an estimate of the terms it will publish (held terms one copy of which
  formula 4 allows, plus terms whose global share of the last bag is at least one); the round
  then re-sanitises the whole corpus and judges every cluster on its real S(E), and the next
  round mends whatever the estimate got wrong.
- When a single cluster is left it is accepted even if it fails (nothing is left to merge
  with); the report says so (``unmet``).
"""

from __future__ import annotations

import heapq
import math
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from app.core.anonymisation.anony import AnonyResult, anonymise
from app.core.anonymisation.clustering import partition as partition_corpus
from app.core.history import SeriesHistory
from app.core.model import Publication, PublishedRelease, Row, Transaction, make_row
from app.core.params import PublishParams
from app.core.perturbation.sanony import finalise, release_state
from app.core.progress import Progress, ProgressCallback

__all__ = [
    "ScompResult",
    "cluster_fails",
    "failing_clusters",
    "linkability",
    "publish_scomp",
    "scomp_partition",
    "term_probability",
]

#: Live neighbours searched on each side of a failing cluster in the clustering order.
_WINDOW = 3
_EPS = 1e-9


def term_probability(cluster_size: int, rate: float, n_rows: int, n: int) -> float:
    """``P(E, s) = 1 − (1 − ρ_s)^n`` with ``ρ_s = (N(E)/N(T))·ss(s, T)`` (section 3).

    Computed as ``−expm1(n·log1p(−ρ))`` so that small ρ and large n lose no precision.

    >>> term_probability(2, 0.5, 4, 4)  # ρ = 1/4: 1 − (3/4)^4 = 175/256
    0.68359375
    """
    rho = cluster_size / n_rows * rate
    if rho >= 1.0:
        return 1.0
    if rho <= 0.0:
        return 0.0
    return -math.expm1(n * math.log1p(-rho))


def linkability(
    cluster_size: int, rates: Iterable[float], n_rows: int, d: int, n: int | None = None
) -> float:
    """``P(E, s^d)``: the largest ``Π P(E, s)`` over the d-subsets of S(E) (formula 7).

    Every factor is at most 1, so the best subset is the d terms of largest ``P(E, s)``,
    i.e. of largest population rate: no subset is enumerated. ``rates`` are the ``ss(s, T)``
    of the distinct private terms of E; fewer than d of them give 0. ``n`` defaults to
    ``n_rows`` (the other release has the size of this one).

    >>> linkability(2, [0.5, 0.5, 0.25], 4, 2)  # (175/256)^2
    0.4673004150390625
    """
    size = n_rows if n is None else n
    best = heapq.nlargest(d, rates)
    if len(best) < d:
        return 0.0
    return math.prod(term_probability(cluster_size, r, n_rows, size) for r in best)


def cluster_fails(
    cluster_size: int,
    rates: Iterable[float],
    n_rows: int,
    d: int,
    confidence: float,
    other_releases: int = 1,
    n: int | None = None,
) -> bool:
    """Whether E breaks (d, α)-linkability: ``|S(E)| < d`` or ``P(E, s^d)^(N−1) < α``.

    ``other_releases`` is N − 1, the independent releases an adversary may compose with
    (section 6: ``α = Π_{y=1}^{N−1} P^y(E, s^d)``).

    >>> cluster_fails(2, [0.5, 0.5], 4, 2, 0.4)
    False
    >>> cluster_fails(2, [0.5, 0.5], 4, 2, 0.4, other_releases=2)
    True
    """
    listed = list(rates)
    if len(listed) < d:
        return True
    return linkability(cluster_size, listed, n_rows, d, n) ** other_releases < confidence


def failing_clusters(
    release: PublishedRelease, d: int, confidence: float, other_releases: int = 1
) -> list[str]:
    """Ids of the published clusters of ``release`` that break (d, α)-linkability.

    S(E) is the cluster's private terms (segment plus global share), ``ss`` the release's
    published population rates and ``N(T)`` its rows.
    """
    n_rows = release.n_rows
    return [
        cluster.cluster_id
        for cluster in release.clusters
        if cluster_fails(
            cluster.size,
            [release.population_rates.get(s, 0.0) for s in cluster.private_terms()],
            n_rows,
            d,
            confidence,
            other_releases,
        )
    ]


@dataclass(slots=True)
class ScompResult:
    """Anony on the final partition, with what sComp did to get there."""

    anony: AnonyResult
    partition: list[list[int]]
    clusters_before: int
    failing_before: int
    rounds: int
    merges: int
    unmet: bool


def _failing(result: AnonyResult, params: PublishParams) -> list[int]:
    failing: list[int] = []
    for g, cluster in enumerate(result.clusters):
        held = {s for s, k in cluster.private_counts.items() if k}
        held.update(s for s, k in cluster.global_share.items() if k)
        rates = [result.rates[s] for s in held]
        if cluster_fails(
            len(cluster.rows),
            rates,
            result.n_rows,
            params.d,
            params.confidence,
            params.other_releases,
        ):
            failing.append(g)
    return failing


def _jaccard(a: set[str], b: set[str]) -> float:
    common = len(a & b) if len(a) <= len(b) else len(b & a)
    union = len(a) + len(b) - common
    return common / union if union else 1.0


class _Order:
    """Live clusters in clustering order as a doubly linked list: O(1) removal and steps."""

    def __init__(self, k: int) -> None:
        self.prev = list(range(-1, k - 1))
        self.next = [*range(1, k), -1]
        self.alive = [True] * k

    def remove(self, p: int) -> None:
        before, after = self.prev[p], self.next[p]
        if before >= 0:
            self.next[before] = after
        if after >= 0:
            self.prev[after] = before
        self.alive[p] = False

    def neighbours(self, g: int) -> list[tuple[int, int]]:
        """Up to ``_WINDOW`` live clusters on each side of ``g``: ``(steps away, position)``."""
        found: list[tuple[int, int]] = []
        for links in (self.prev, self.next):
            p = links[g]
            for steps in range(1, _WINDOW + 1):
                if p < 0:
                    break
                found.append((steps, p))
                p = links[p]
        return found


def _kept_rates(held: Counter[str], size: int, result: AnonyResult, r_th: float) -> list[float]:
    """Rates of the terms a cluster of ``size`` rows holding ``held`` would publish.

    Formula 4 allows ``N(s, C_c) + J_s(C)`` up to ``r_th·ss(s)·N(C)``: a term is published
    when one copy is allowed and the cluster holds s, or its global share
    ``J_s(C) = round(N(C)·N(s, C_g)/N(T))`` (formula 3, with the last bag) is at least 1.
    An estimate for choosing merges; the round's re-sanitisation judges the real S(E).
    """
    n_rows = result.n_rows
    kept: list[float] = []
    for s, rate in result.rates.items():
        if math.floor(r_th * rate * size + _EPS) < 1:
            continue
        if held.get(s, 0) or round(size * result.global_bag.get(s, 0) / n_rows) >= 1:
            kept.append(rate)
    return kept


def _merge_round(
    partition: list[list[int]],
    failing: Sequence[int],
    rows: Sequence[Row],
    private_sets: Sequence[frozenset[str]],
    result: AnonyResult,
    params: PublishParams,
) -> tuple[list[list[int]], int]:
    """Merge each failing cluster with its nearest live neighbour (Algorithm 1, steps 10-15),
    again and again while the grown cluster still fails on the terms it will likely keep."""
    groups = [list(members) for members in partition]
    terms = [{t for i in members for t in rows[i]} for members in partition]
    held = [Counter(s for i in members for s in private_sets[i]) for members in partition]
    order = _Order(len(groups))
    touched = [False] * len(groups)
    merges = 0

    def fails(g: int) -> bool:
        size = len(groups[g])
        kept = _kept_rates(held[g], size, result, params.r_th)
        return cluster_fails(
            size, kept, result.n_rows, params.d, params.confidence, params.other_releases
        )

    for g in failing:
        while order.alive[g]:
            candidates = order.neighbours(g)
            if not candidates:
                break
            # Untouched by this round first, then most similar, then nearest, then left.
            _, _, _, best = max(
                (not touched[p], _jaccard(terms[g], terms[p]), -distance, -p)
                for distance, p in candidates
            )
            target = -best
            groups[g].extend(groups[target])
            terms[g] |= terms[target]
            held[g] += held[target]
            order.remove(target)
            touched[g] = True
            merges += 1
            if not fails(g):
                break
    return [groups[p] for p in range(len(groups)) if order.alive[p]], merges


def scomp_partition(
    rows: Sequence[Row],
    private_sets: Sequence[frozenset[str]],
    partition: Sequence[Sequence[int]],
    params: PublishParams,
    seed: int | str,
    progress: ProgressCallback | None = None,
) -> ScompResult:
    """Algorithm 1 (sComp) on Anony clusters: merge failing clusters, re-sanitise, repeat.

    Parameters
    ----------
    rows, private_sets:
        Non-private set and private set of each transaction.
    partition:
        The starting clusters, in clustering order (neighbours are similar).
    params:
        ``d``, ``confidence`` (α), ``other_releases`` (N − 1) and ``r_th`` for Anony.
    seed:
        Anony's refining seed.
    """
    current = [list(members) for members in partition]
    result = anonymise(rows, private_sets, current, params.r_th, seed)
    failing = _failing(result, params)
    before, clusters_before = len(failing), len(current)
    rounds = merges = 0
    while failing and len(current) > 1:
        current, merged = _merge_round(current, failing, rows, private_sets, result, params)
        rounds += 1
        merges += merged
        if progress is not None:
            progress("verify", 1.0 - len(current) / max(clusters_before, 1))
        result = anonymise(rows, private_sets, current, params.r_th, seed)
        failing = _failing(result, params)
    return ScompResult(result, current, clusters_before, before, rounds, merges, bool(failing))


def publish_scomp(
    history: SeriesHistory,
    corpus: Sequence[Transaction],
    private_terms: frozenset[str],
    params: PublishParams,
    progress: ProgressCallback | None = None,
) -> Publication:
    """Publish ``corpus`` with Anony and sComp: every cluster (d, α)-linkable (design.md §8).

    Clustering (or the client's partition) and Anony as for Sanony, then Algorithm 1: clusters
    failing ``P(E, s^d)^(N−1) >= α`` with ``|S(E)| >= d`` are merged with their nearest
    neighbour and the corpus re-sanitised until none fails (a single cluster left is accepted).
    No counterfeit is added; earlier releases of the series are not consulted.
    """
    report = Progress(progress)
    release_no = history.next_release_no
    seed = params.randomness_key(release_no)
    started = time.perf_counter()
    report("anony")
    rows = [make_row(t.terms - private_terms) for t in corpus]
    private_sets = [frozenset(t.terms & private_terms) for t in corpus]
    partition = partition_corpus(corpus, rows, params.cluster_size)
    report("verify")
    done = scomp_partition(rows, private_sets, partition, params, seed, report)
    # Members of a merged cluster are listed cluster by cluster: ``finalise`` shuffles rows.
    state = release_state(done.anony, release_no)
    published, ledger = finalise(state, corpus, done.partition, seed, private_terms)
    clusters = len(done.partition)
    return Publication(
        published,
        ledger,
        {
            "method": "scomp",
            "clusters": clusters,
            "rows": published.n_rows,
            "true_rows": len(corpus),
            "counterfeits": 0,
            "clusters_before": done.clusters_before,
            "failing_before": done.failing_before,
            "failing_share_before": round(done.failing_before / max(done.clusters_before, 1), 6),
            "mean_cluster_size": round(len(corpus) / max(clusters, 1), 3),
            "merge_rounds": done.rounds,
            "merges": done.merges,
            "unmet": done.unmet,
            "seconds": {"scomp": round(time.perf_counter() - started, 4)},
        },
    )

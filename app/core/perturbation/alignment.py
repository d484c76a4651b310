"""Alignment: a new cluster holds no more copies of s than its published cover can hide.

Decision (design.md §5.6; the order of steps is left to the publisher). A new cluster that continues
a lineage overlaps its published clusters on most of its rows. When the published side says the
overlap holds few copies of s (``f2`` of the old cluster is small, often 0), the new cluster's other
copies must sit on its few rows outside the overlap: the adversary's posterior for those rows is
about ``(N(s,C) - r)/(N(C) - N(O))``, far above the prior. Counterfeits can only dilute it one
s̄-row at a time (FP2), and an overlap that holds the whole published cluster (a lineage of one
popular set) pins the range, which no counterfeit undoes.

So before BP, each new cluster gives copies of s back to the global bag, one at a time, while
one of its rows is over ``r_th`` for s against the published releases (cluster composition,
formula 12 over the cover). The copies stay in the release (global bag, so ``ss`` and the data
are unchanged), they are not suppressed. The cluster's global share ``N(s, C_ol)`` counts in
``N(s, C*)`` as well, so where the cluster has no copy left in ``C_c`` its share is lowered
instead, and after alignment ``J_s`` (formula 3) is recomputed with the larger bag, capped at
the level alignment reached (the same cap Anony applies, design.md §2.5).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

import numpy as np

from app.core.risk.assess import cluster_posteriors, serial_risk
from app.core.risk.incremental import ClusterPosteriors
from app.core.risk.overlap import cluster_cover
from app.core.risk.state import ClusterState, SeriesState

__all__ = ["align_release", "one_set_to_bag"]

#: Passes over the clusters whose global share grew when ``J_s`` was recomputed.
_PASSES = 4


def _over_terms(
    state: SeriesState, j: int, c: int, limit: float, posteriors: ClusterPosteriors
) -> set[str]:
    rates = state.releases[j].rates
    over: set[str] = set()
    for betas in posteriors(c).values():
        for s, beta in betas.items():
            if serial_risk(beta, rates.get(s, 0.0)) > limit:
                over.add(s)
    return over


def _floor(state: SeriesState, j: int, c: int, s: str) -> int:
    """Copies of s the cluster must keep for its published overlaps to stay safe (Lemma 4:
    ``f2`` of the new cluster at least the published cluster's, ``min(N(O), N(s, C*))``)."""
    floor = 0
    for overlap in cluster_cover(state, (j, c), releases=range(j)):
        other = state.cluster(overlap.other)
        floor = max(floor, min(overlap.size, other.n_s(s)))
    return floor


def _give_back(cluster: ClusterState, s: str, bag: Counter[str], moved: Counter[str]) -> bool:
    if cluster.private_counts.get(s, 0) > 0:
        cluster.private_counts[s] -= 1
        if not cluster.private_counts[s]:
            del cluster.private_counts[s]
        bag[s] += 1
        moved[s] += 1
        return True
    if cluster.global_share.get(s, 0) > 0:
        cluster.global_share[s] -= 1
        return True
    return False


def _empty_if_safe(
    state: SeriesState, j: int, c: int, s: str, limit: float, moved: Counter[str]
) -> bool:
    """Move every copy of s out of cluster ``c`` (segment to the bag, share to 0) when no row
    of the published clusters it overlaps is then over ``limit`` for s; else change nothing."""
    release = state.releases[j]
    cluster = release.clusters[c]
    kept, share = cluster.private_counts.get(s, 0), cluster.global_share.get(s, 0)
    if kept + share == 0:
        return False
    cluster.private_counts.pop(s, None)
    cluster.global_share.pop(s, None)
    for overlap in cluster_cover(state, (j, c), releases=range(j)):
        rates = state.releases[overlap.other[0]].rates
        for betas in cluster_posteriors(state, overlap.other, (s,)).values():
            if serial_risk(betas.get(s, 0.0), rates.get(s, 0.0)) > limit:
                if kept:
                    cluster.private_counts[s] = kept
                if share:
                    cluster.global_share[s] = share
                return False
    release.global_bag[s] += kept
    moved[s] += kept
    return True


def one_set_to_bag(state: SeriesState, j: int, r_th: float) -> Counter[str]:
    """A cluster where one non-private set holds most of the rows publishes no private
    copy of its own: its segment goes to the global bag, its global share is 0 (decision,
    design.md §5). Returns the copies moved per term.

    Such rows are identical (the empty set of private-only transactions, or one popular page),
    so each release's cluster of them overlaps the earlier ones on nearly all its rows and pins
    their ranges (``f1 = f2``). Formula 12 then multiplies the evidence of every earlier release
    on the few rows outside the overlaps, where a single copy of a rare term is all but named:
    counterfeits there dilute it one row at a time, and the pinned rows inside are lifted by
    every row added. Measured on SeGen series of BMS-WebView-1 (5 releases of 2,980, seeds 2
    and 3): such clusters caused most of BP's and FP2's counterfeits and every failed
    publication; with the rule, counterfeits fell from 2.9% to 1.0-1.4% of the rows and both
    series published. What it costs is association: the copies' link with that one set is
    estimated through the bag instead (the utility figures in docs/evaluation.md). Copies that
    BP later adds for an overlapped published cluster are kept.
    """
    release = state.releases[j]
    moved: Counter[str] = Counter()
    caps: dict[tuple[int, str], int] = {}
    for c, cluster in enumerate(release.clusters):
        if not cluster.of_one_set:
            continue
        for s in sorted(cluster.terms()):
            release.global_bag[s] += cluster.private_counts.get(s, 0)
            moved[s] += cluster.private_counts.get(s, 0)
            caps[c, s] = 0
        cluster.private_counts.clear()
        cluster.global_share.clear()
    if caps:
        _recompute_shares(state, j, {s for _, s in caps}, caps, r_th)
    return moved


def align_release(
    state: SeriesState,
    j: int,
    r_th: float,
    anony_r_th: float | None = None,
    posteriors: ClusterPosteriors | None = None,
) -> Counter[str]:
    """Align every cluster of release ``j`` with its published cover; returns copies moved to
    the global bag per term. ``j`` must be the last release (the new one); recomputed global
    shares keep Anony's cap ``γ_s(C) <= anony_r_th`` (default ``r_th``). ``posteriors``: the
    caller's cache of β_cluster for release ``j``, if it keeps one."""
    if posteriors is None:
        posteriors = ClusterPosteriors(state, j)
    release = state.releases[j]
    limit = r_th * (1 + 1e-9)
    moved: Counter[str] = Counter()
    caps: dict[tuple[int, str], int] = {}
    todo = list(range(len(release.clusters)))
    for _ in range(_PASSES):
        touched: set[str] = set()
        for c in todo:
            touched |= _align_cluster(state, j, c, limit, moved, caps, posteriors)
        if not touched:
            break
        before = [dict(cluster.global_share) for cluster in release.clusters]
        _recompute_shares(state, j, touched, caps, r_th if anony_r_th is None else anony_r_th)
        # A larger bag raises J_s of other clusters: those are aligned again.
        todo = [
            c
            for c, cluster in enumerate(release.clusters)
            if any(cluster.global_share.get(s, 0) > before[c].get(s, 0) for s in touched)
        ]
        if not todo:
            break
    return moved


def _align_cluster(
    state: SeriesState,
    j: int,
    c: int,
    limit: float,
    moved: Counter[str],
    caps: dict[tuple[int, str], int],
    posteriors: ClusterPosteriors,
) -> set[str]:
    release = state.releases[j]
    cluster = release.clusters[c]
    touched: set[str] = set()
    for _ in range(cluster.n + 1):
        changed = False
        for s in sorted(_over_terms(state, j, c, limit, posteriors)):
            if cluster.n_s(s) <= _floor(state, j, c, s):
                # Fewer copies would expose a published cluster (BP's Lemma 4), unless none
                # at all: an overlap whose ranges then contradict tells nothing to either side.
                if _empty_if_safe(state, j, c, s, limit, moved):
                    caps[c, s] = 0
                    touched.add(s)
                    changed = True
                continue
            if _give_back(cluster, s, release.global_bag, moved):
                caps[c, s] = cluster.n_s(s)
                touched.add(s)
                changed = True
        if not changed:
            break
    return touched


def _recompute_shares(
    state: SeriesState, j: int, terms: set[str], caps: dict[tuple[int, str], int], r_th: float
) -> None:
    """``J_s(C) = round(N(C)·N(s, C_g)/N(T))`` (formula 3) for the terms whose bag changed,
    capped so that ``γ_s(C) <= r_th`` and at the level alignment reached.

    Each term is one vector over the clusters (the arithmetic of formula 3 and of Anony's cap
    term by term as in :mod:`app.core.anonymisation.anony`); only clusters that get or had a
    share of s are written, in cluster order.
    """
    release = state.releases[j]
    clusters = release.clusters
    n_true = np.array([cluster.n_true for cluster in clusters], dtype=np.int64)
    n_rows = int(n_true.sum())
    one_set = np.array([cluster.of_one_set for cluster in clusters], dtype=bool)
    kept = _by_term((c, cluster.private_counts) for c, cluster in enumerate(clusters))
    shared = _by_term((c, cluster.global_share) for c, cluster in enumerate(clusters))
    capped: dict[str, dict[int, int]] = {}
    for (c, s), cap in caps.items():
        capped.setdefault(s, {})[c] = cap
    for s in terms:
        in_bag = release.global_bag.get(s, 0)
        private = np.zeros(len(clusters), dtype=np.int64)
        holders = kept.get(s, {})
        private[list(holders)] = list(holders.values())
        total = int(private.sum()) + in_bag
        if n_rows:
            share = np.rint(n_true * in_bag / n_rows).astype(np.int64)
            allowed = (r_th * total * n_true / n_rows + 1e-9).astype(np.int64)
        else:
            share = allowed = np.zeros(len(clusters), dtype=np.int64)
        share = np.minimum(share, np.maximum(np.minimum(allowed, n_true) - private, 0))
        ceiling = np.full(len(clusters), -1, dtype=np.int64)  # -1: no cap
        for c, value in capped.get(s, {}).items():
            ceiling[c] = value
        ceiling[one_set] = 0
        limited = ceiling >= 0
        share[limited] = np.minimum(share, np.maximum(ceiling - private, 0))[limited]
        touched = set(np.flatnonzero(share > 0).tolist()) | set(shared.get(s, ()))
        for c in sorted(touched):
            if share[c] > 0:
                clusters[c].global_share[s] = int(share[c])
            else:
                clusters[c].global_share.pop(s, None)


def _by_term(counts: Iterable[tuple[int, Mapping[str, int]]]) -> dict[str, dict[int, int]]:
    """Cluster position -> term -> copies, turned around: term -> cluster position -> copies."""
    found: dict[str, dict[int, int]] = {}
    for c, held in counts:
        for s, k in held.items():
            found.setdefault(s, {})[c] = k
    return found

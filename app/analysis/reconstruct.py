"""Random reconstruction of a release into baskets (Sanony paper, Definition 4).

Definition 4 reads a published cluster ``C*`` as a distribution over datasets: its
``N(s, C*) = N(s, C_c) + N(s, C_ol)`` copies of each private term s lie on ``N(s, C*)``
distinct rows of its ``N(C*)`` rows, every choice of rows equally likely. A random
reconstruction draws one such dataset: for each cluster and each private term, that many
distinct rows picked at random receive s. Averages over reconstructions estimate what the
release says about the raw data (association rules, co-occurrences); one reconstruction
is one plausible dataset, not the raw one.

The global bag's copies enter Definition 4 through the clusters' ``global_share`` (formula 3,
rounded). A bag spread thin over many clusters rounds to a share of 0 in each, so those shares
can place almost none of it (most of the private copies of a release, on BMS-WebView series).
A reconstruction places the rest as well (:meth:`app.analysis.reader.Release.unplaced_copies`):
each goes to a distinct random row of the release that holds no copy of s yet, so a
reconstruction holds every published copy. :mod:`app.analysis.placement` gives the same
model's moments in closed form.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from app.analysis.reader import Cluster, Release

__all__ = [
    "basket_frame",
    "basket_table",
    "reconstruct",
    "reconstruct_cluster",
    "reconstruct_series",
]


def reconstruct_cluster(cluster: Cluster, rng: random.Random) -> list[list[str]]:
    """One draw of Definition 4 for a cluster: its rows, each with the private terms it
    received (sorted terms, public first then private)."""
    private: list[list[str]] = [[] for _ in cluster.rows]
    for s in sorted(cluster.private_term_names()):
        for i in rng.sample(range(cluster.size), cluster.n_s(s)):
            private[i].append(s)
    return [list(row) + extra for row, extra in zip(cluster.rows, private, strict=True)]


def reconstruct(release: Release, seed: int) -> list[list[str]]:
    """One reconstruction of ``release``: a basket per published row, cluster by cluster.

    The same ``seed`` gives the same baskets (each cluster's draw is seeded by the seed,
    the release number and the cluster id, so a cluster's draw does not depend on the
    others'; the bag's unplaced copies have a draw of their own, after the clusters').
    """
    baskets: list[list[str]] = []
    for cluster in release.clusters:
        rng = random.Random(f"{seed}:{release.release_no}:{cluster.cluster_id}")
        baskets.extend(reconstruct_cluster(cluster, rng))
    _place_unplaced(release, baskets, random.Random(f"{seed}:{release.release_no}:bag"))
    return baskets


def _place_unplaced(release: Release, baskets: list[list[str]], rng: random.Random) -> None:
    """Give each of the bag's unplaced copies of s to a distinct random basket without s
    (every basket without s when there are fewer of them than copies)."""
    for s in sorted(release.global_bag):
        left = release.unplaced_copies(s)
        if not left:
            continue
        free = [i for i, basket in enumerate(baskets) if s not in basket]
        for i in rng.sample(free, min(left, len(free))):
            baskets[i].append(s)


def reconstruct_series(releases: Sequence[Release], seed: int) -> dict[int, list[list[str]]]:
    """A reconstruction of every release, by release number."""
    return {r.release_no: reconstruct(r, seed) for r in releases}


def basket_table(releases: Iterable[Release], seed: int) -> pd.DataFrame:
    """A reconstruction of every release, one line per published row: ``release_no,
    cluster_id, row, items`` (``row`` the row's position in its cluster, as
    :func:`app.analysis.reader.rows_table` numbers it; ``items`` its terms as a tuple: a
    term may hold spaces, a row may hold none)."""
    records = []
    for release in releases:
        baskets = iter(reconstruct(release, seed))
        for cluster in release.clusters:
            for i in range(cluster.size):
                records.append((release.release_no, cluster.cluster_id, i, tuple(next(baskets))))
    return pd.DataFrame.from_records(records, columns=["release_no", "cluster_id", "row", "items"])


def basket_frame(baskets: Iterable[Sequence[str]]) -> pd.DataFrame:
    """Baskets as a one-hot boolean frame (a column per term, sorted), what mlxtend's
    ``apriori`` reads."""
    listed = [sorted(set(b)) for b in baskets]
    terms = sorted({t for b in listed for t in b})
    column = {t: j for j, t in enumerate(terms)}
    table = np.zeros((len(listed), len(terms)), dtype=bool)
    for i, basket in enumerate(listed):
        table[i, [column[t] for t in basket]] = True
    return pd.DataFrame(table, columns=terms)

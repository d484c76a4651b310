"""What an analyst can say from a release: term counts and itemset supports with intervals.

Two things separate a release from the raw snapshot it came from, and both are bounded by
what the release publishes:

- **Counterfeit rows.** Each carries at most one copy of a private term s (a row holds a
  term once), so the true count of s is at least the published copies minus the counterfeit
  rows (plus the global bag's counterfeit copies, Kanony's ``global_counterfeits``). The
  count of counterfeit rows is the release-level total every release now publishes
  (``counterfeit_rows``, issue 19). A release published before it lacks it: the sum of its
  clusters' ``counterfeits`` is used, which then counted BP and FP1's rows only, so the floor
  it gives is marked ``counterfeits_complete = False`` (rows the post-condition repair added
  are not in it and the floor may be too high).
- **Suppression** (design.md §5, the last resort) removes copies of private terms. The copies a
  release suppresses are at most ``max_suppression`` (default 1%) of its private copies
  (``suppression_scope = "release"``), or of the series' copies so far less what earlier
  releases took (``"series"``, the default), and never less than ``suppression_floor``
  copies; :func:`suppression_bound` turns that budget into a number from the published
  copies alone. The true count of s is at most the published copies plus that bound.

Supports under random placement (Sanony paper, Definition 4): in a cluster ``C*`` of
``N(C*)`` rows of which ``m`` contain the public itemset X, the ``N(s, C*)`` copies of s sit
on ``N(s, C*)`` distinct random rows, so the rows holding X and s follow a hypergeometric law
(mean ``N(s, C*) m / N(C*)``). Clusters are independent; means and variances add up. That
interval describes the placement's spread, not a guarantee about the raw data: the
reconstruction is a model. The counterfeit and suppression bounds are added on either side.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations, product

import numpy as np
import pandas as pd
from scipy import sparse

from app.analysis.reader import Release

__all__ = [
    "DEFAULT_MAX_SUPPRESSION",
    "Estimate",
    "counterfeit_bound",
    "itemset_support",
    "prevalence_table",
    "supports_table",
    "suppression_bound",
    "term_count",
]

#: design.md §5's defaults, used when a release does not echo its suppression parameters.
DEFAULT_MAX_SUPPRESSION = 0.01
DEFAULT_SUPPRESSION_FLOOR = 3
DEFAULT_SUPPRESSION_SCOPE = "series"


@dataclass(frozen=True, slots=True)
class Estimate:
    """An estimate and the interval the release allows.

    ``expected`` is the point estimate (published copies for a count; the mean under random
    placement for a support), ``sd`` the placement's standard deviation (0 for what is read
    off the rows), ``low``/``high`` the interval; ``counterfeits`` and ``suppression`` the
    bounds that widened it, ``counterfeits_complete`` whether the counterfeit count the
    release publishes is complete (see the module's docstring).
    """

    expected: float
    sd: float
    low: float
    high: float
    published: float
    counterfeits: int
    suppression: float
    counterfeits_complete: bool

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high


def counterfeit_bound(release: Release) -> tuple[int, bool]:
    """The most copies of one private term that counterfeits may add to ``release``, and
    whether the count is complete: counterfeit rows (a release-level total when published,
    else the clusters' ``counterfeits``, BP and FP1's only in releases published before
    issue 19) plus the global bag's counterfeit copies."""
    if release.counterfeit_rows_total is not None:
        rows, complete = release.counterfeit_rows_total, True
    else:
        rows, complete = sum(c.counterfeits for c in release.clusters), False
    return rows + release.global_counterfeits, complete


def _param(release: Release, name: str, default: float | str) -> float | str:
    value = release.params.get(name, default)
    return default if value is None else value


def suppression_bound(release: Release) -> float:
    """The most private copies ``release`` can have suppressed, from its published copies.

    With ``P`` the release's published private copies and ``E`` the earlier releases'
    (:attr:`Release.earlier_private_copies`), share ``a = max_suppression`` and
    ``suppression_floor`` f, the budget allows ``supp <= max(f, a (P + supp + E))`` (the
    copies a release counts before the repair are at most ``P + supp``; the series scope's
    earlier copies are at most ``E`` plus what the earlier releases suppressed, which the
    budget takes back), so ``supp <= max(f, a (P + E) / (1 - a))``. ``E = 0`` under
    ``suppression_scope = "release"``. ``inf`` when the series scope needs ``E`` and the
    earlier releases were not loaded, when ``a >= 1``, or when the release says it
    suppressed beyond its budget (``suppression_beyond_budget``, an escalated release).
    """
    if release.suppression_beyond_budget:  # an escalated release (issue 20): no bound
        return math.inf
    share = float(_param(release, "max_suppression", DEFAULT_MAX_SUPPRESSION))
    floor = float(_param(release, "suppression_floor", DEFAULT_SUPPRESSION_FLOOR))
    scope = str(_param(release, "suppression_scope", DEFAULT_SUPPRESSION_SCOPE))
    if share >= 1:
        return math.inf
    if scope == "release" or release.release_no == 1:
        earlier = 0
    elif release.earlier_private_copies is None:
        return math.inf
    else:
        earlier = release.earlier_private_copies
    copies = release.private_copies()
    return float(max(floor, math.floor(share * (copies + earlier) / (1 - share) + 1e-9)))


def term_count(release: Release, term: str) -> Estimate:
    """The true number of records of the raw snapshot that hold private ``term``.

    ``published`` copies (cluster segments plus global bag); the truth is at least
    ``published - counterfeits`` (each counterfeit row or bag counterfeit holds at most one
    copy) and at most ``published + suppression`` (:func:`suppression_bound`).
    """
    published = release.published_copies(term)
    counterfeits, complete = counterfeit_bound(release)
    suppressed = suppression_bound(release)
    return Estimate(
        expected=float(published),
        sd=0.0,
        low=float(max(0, published - counterfeits)),
        high=published + suppressed,
        published=float(published),
        counterfeits=counterfeits,
        suppression=suppressed,
        counterfeits_complete=complete,
    )


def prevalence_table(releases: Sequence[Release], terms: Iterable[str]) -> pd.DataFrame:
    """Each private term's count and prevalence per release, with their intervals.

    The prevalence divides the count by the true records: at most ``n_rows``, at least
    ``n_rows`` less the counterfeit rows (so ``low / n_rows`` and ``high / (n_rows -
    counterfeit rows)``).
    """
    records = []
    wanted = list(terms)
    for release in releases:
        rows, _ = counterfeit_bound(release)
        fewest = max(1, release.n_rows - (rows - release.global_counterfeits))
        for s in wanted:
            e = term_count(release, s)
            records.append(
                (
                    release.release_no,
                    release.label,
                    s,
                    e.expected,
                    e.low,
                    e.high,
                    e.expected / max(1, release.n_rows),
                    e.low / max(1, release.n_rows),
                    min(1.0, e.high / fewest),
                    e.counterfeits_complete,
                )
            )
    return pd.DataFrame.from_records(
        records,
        columns=[
            "release_no",
            "label",
            "term",
            "count",
            "count_low",
            "count_high",
            "prevalence",
            "prevalence_low",
            "prevalence_high",
            "counterfeits_complete",
        ],
    )


def itemset_support(
    release: Release,
    public_terms: Iterable[str],
    private_term: str | None = None,
    *,
    z: float = 1.96,
) -> Estimate:
    """The support (records) of public itemset X, optionally with one private term s.

    Without s the support is read off the rows: ``published`` rows contain X, of which at
    most ``counterfeits`` are counterfeit rows. With s it is the expected support under
    random placement within clusters (Definition 4; hypergeometric per cluster) with the
    interval ``mean -/+ z sd``, widened by the counterfeit bound below and the suppression
    bound above, and clipped to what the counts allow (at most the support of X and the
    count of s).
    """
    itemset = frozenset(public_terms)
    counterfeits, complete = counterfeit_bound(release)
    row_counterfeits = counterfeits - release.global_counterfeits
    mean = variance = 0.0
    with_x = 0
    for cluster in release.clusters:
        n = cluster.size
        m = cluster.rows_with(itemset)
        with_x += m
        if private_term is None or n == 0:
            continue
        k = cluster.n_s(private_term)
        mean += k * m / n
        if n > 1:
            variance += k * (m / n) * (1 - m / n) * (n - k) / (n - 1)
    if private_term is None:
        return Estimate(
            expected=float(with_x),
            sd=0.0,
            low=float(max(0, with_x - row_counterfeits)),
            high=float(with_x),
            published=float(with_x),
            counterfeits=row_counterfeits,
            suppression=0.0,
            counterfeits_complete=complete,
        )
    return _placement_estimate(
        release, mean, math.sqrt(variance), with_x, term_count(release, private_term), z
    )


def _placement_estimate(
    release: Release, mean: float, sd: float, with_x: int, count: Estimate, z: float
) -> Estimate:
    """The interval of a support under random placement: ``mean -/+ z sd``, widened by the
    counterfeits below and suppression above, clipped to the support of X and the count."""
    counterfeits, complete = counterfeit_bound(release)
    suppressed = count.suppression
    high = min(mean + z * sd + suppressed, float(with_x), count.high)
    low = min(max(0.0, mean - z * sd - counterfeits), high)
    return Estimate(
        expected=mean,
        sd=sd,
        low=low,
        high=high,
        published=mean,
        counterfeits=counterfeits,
        suppression=suppressed,
        counterfeits_complete=complete,
    )


def _pair_moments(
    release: Release, public: Sequence[str], private: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    """Mean and sd of the support of every (public term, private term) pair under random
    placement, as :func:`itemset_support` computes them one by one, as matrices.

    With ``P[c, t] = m / N(C*)`` and ``K[c, s] = N(s, C*)``: mean ``P^T K`` and variance
    ``(P (1 - P))^T W`` where ``W = K (N - K) / (N - 1)`` (0 for a cluster of one row).
    """
    clusters = [c for c in release.clusters if c.size > 0]
    sizes = np.array([c.size for c in clusters], dtype=float)
    m = np.array([[len(c.index.get(t, ())) for t in public] for c in clusters], dtype=float)
    k = np.array([[c.n_s(s) for s in private] for c in clusters], dtype=float)
    p = m / sizes[:, None]
    w = np.where(
        sizes[:, None] > 1, k * (sizes[:, None] - k) / np.maximum(sizes[:, None] - 1, 1), 0.0
    )
    means = p.T @ k
    variances = (p * (1 - p)).T @ w
    return means, np.sqrt(np.maximum(variances, 0.0))


def _co_occurrences(release: Release, terms: Sequence[str]) -> np.ndarray:
    """Rows holding both terms, for every pair of ``terms`` (a dense matrix)."""
    column = {t: j for j, t in enumerate(terms)}
    entries = [
        (i, column[t])
        for i, row in enumerate(row for c in release.clusters for row in c.rows)
        for t in row
        if t in column
    ]
    rows, cols = zip(*entries, strict=True) if entries else ((), ())
    incidence = sparse.csr_matrix(
        (np.ones(len(rows)), (rows, cols)), shape=(release.n_rows, len(terms))
    )
    return np.asarray((incidence.T @ incidence).todense())


def supports_table(
    releases: Sequence[Release],
    *,
    min_support: float = 1.0,
    pairs: str = "private",
    z: float = 1.96,
) -> pd.DataFrame:
    """Expected supports of terms and pairs, one line each, per release.

    Every private term (its count, :func:`term_count`) and every public term whose support
    reaches ``min_support`` (records; below 1, a share of the release's rows); ``pairs``
    adds pairs whose expected support reaches it: ``private`` (public x private), ``public``
    (public x public), ``all`` (both) or ``none``.
    """
    if pairs not in ("private", "public", "all", "none"):
        raise ValueError(f"pairs must be private, public, all or none, not {pairs!r}")
    records: list[tuple[object, ...]] = []

    def add(release: Release, items: Sequence[str], kind: str, estimate: Estimate) -> None:
        records.append(
            (
                release.release_no,
                kind,
                " ".join(items),
                len(items),
                round(estimate.expected, 4),
                round(estimate.sd, 4),
                round(estimate.low, 4),
                estimate.high if math.isinf(estimate.high) else round(estimate.high, 4),
                estimate.counterfeits,
                estimate.suppression,
                estimate.counterfeits_complete,
            )
        )

    for release in releases:
        threshold = min_support if min_support >= 1 else min_support * release.n_rows
        private = sorted(release.private_terms)
        public_counts: dict[str, int] = {}
        for cluster in release.clusters:
            for row in cluster.rows:
                for t in row:
                    public_counts[t] = public_counts.get(t, 0) + 1
        frequent = sorted(t for t, n in public_counts.items() if n >= threshold)
        for s in private:
            add(release, [s], "private", term_count(release, s))
        for t in frequent:
            add(release, [t], "public", itemset_support(release, [t]))
        if pairs in ("private", "all") and frequent and private:
            means, sds = _pair_moments(release, frequent, private)
            counts = {s: term_count(release, s) for s in private}
            for (i, t), (j, s) in product(enumerate(frequent), enumerate(private)):
                if means[i, j] >= threshold:
                    estimate = _placement_estimate(
                        release,
                        float(means[i, j]),
                        float(sds[i, j]),
                        public_counts[t],
                        counts[s],
                        z,
                    )
                    add(release, [t, s], "public+private", estimate)
        if pairs in ("public", "all") and len(frequent) > 1:
            together = _co_occurrences(release, frequent)
            counterfeits, complete = counterfeit_bound(release)
            row_counterfeits = counterfeits - release.global_counterfeits
            for i, j in combinations(range(len(frequent)), 2):
                n = int(together[i, j])
                if n >= threshold:
                    estimate = Estimate(
                        expected=float(n),
                        sd=0.0,
                        low=float(max(0, n - row_counterfeits)),
                        high=float(n),
                        published=float(n),
                        counterfeits=row_counterfeits,
                        suppression=0.0,
                        counterfeits_complete=complete,
                    )
                    add(release, [frequent[i], frequent[j]], "public+public", estimate)
    return pd.DataFrame.from_records(
        records,
        columns=[
            "release_no",
            "kind",
            "itemset",
            "size",
            "expected",
            "sd",
            "low",
            "high",
            "counterfeits",
            "suppression",
            "counterfeits_complete",
        ],
    )

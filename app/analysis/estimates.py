"""What an analyst can say from a release: term counts and itemset supports with intervals.

Every interval (``low``, ``high``) is a bound that holds for the raw snapshot whatever it is,
given what the release publishes (:mod:`app.analysis.bounds`: counterfeit rows, suppression
and where copies may sit), not a model's spread:

- ``guarantee = "paper"`` (counterfeits possible): both ends hold when the release publishes
  its count of counterfeit rows (``counterfeits_complete``); the high end rests on its
  suppression budget (an escalated release has none: its high end is what suppression cannot
  change, as under ``"true_rows"``).
- ``guarantee = "true_rows"`` (no counterfeit row; suppression may have lowered counts, and
  generalisation removed public terms from some rows, never added any): ``low`` holds.
  Nothing published bounds what was suppressed, so ``high`` only uses what suppression
  cannot change (a count is at most the records; a support has no upper bound, since X's
  rows too may have lost terms), and ``high_if_unsuppressed`` is the upper end conditional on
  nothing of the terms having been suppressed.

``expected`` and ``sd`` are the model's (:mod:`app.analysis.placement`): what a random
reconstruction (:func:`app.analysis.reconstruct.reconstruct`) holds on average and its
spread. The raw data's associations between public and private terms are exactly what a
release hides, so the truth can lie far from ``expected``; only the bounds are a guarantee.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import sparse

from app.analysis.bounds import (
    DEFAULT_MAX_SUPPRESSION,
    counterfeit_bound,
    placement_bounds,
    suppression_bound,
)
from app.analysis.placement import placement_moments
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

#: The supports table's columns, in order (``items`` a tuple of terms).
SUPPORTS_COLUMNS = [
    "release_no",
    "kind",
    "items",
    "size",
    "expected",
    "sd",
    "low",
    "high",
    "high_if_unsuppressed",
    "counterfeits",
    "suppression",
    "counterfeits_complete",
    "guarantee",
]


@dataclass(frozen=True, slots=True)
class Estimate:
    """An estimate and the interval the release guarantees (the module's docstring).

    ``expected`` is the point estimate (published copies for a count; the mean under random
    placement for a support), ``sd`` the placement's standard deviation (0 for what is read
    off the rows), ``low``/``high`` the bounds on the truth, ``high_if_unsuppressed`` the
    upper bound if no copy was suppressed; ``counterfeits`` and ``suppression`` the bounds
    that widened the interval, ``counterfeits_complete`` whether the counterfeit count the
    release publishes is complete, ``guarantee`` the release's.
    """

    expected: float
    sd: float
    low: float
    high: float
    published: float
    counterfeits: int
    suppression: float
    counterfeits_complete: bool
    high_if_unsuppressed: float
    guarantee: str

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high


def term_count(release: Release, term: str) -> Estimate:
    """The true number of records of the raw snapshot that hold private ``term``.

    ``published`` copies (cluster segments plus global bag); the truth is at least
    ``published - counterfeits`` (each counterfeit row or bag counterfeit holds at most one
    copy) and at most ``published + suppression`` (:func:`suppression_bound`) and the
    records (a record holds the term once).
    """
    published = release.published_copies(term)
    counterfeits, complete = counterfeit_bound(release)
    suppressed = suppression_bound(release)
    low = float(max(0, published - counterfeits))
    records = float(max(release.records, low))
    return Estimate(
        expected=float(published),
        sd=0.0,
        low=low,
        high=min(published + suppressed, records),
        published=float(published),
        counterfeits=counterfeits,
        suppression=suppressed,
        counterfeits_complete=complete,
        high_if_unsuppressed=min(float(published), records),
        guarantee=release.guarantee,
    )


def prevalence_table(releases: Sequence[Release], terms: Iterable[str]) -> pd.DataFrame:
    """Each private term's count and prevalence per release, with their intervals.

    The prevalence divides by the records, ``n_rows - counterfeit_rows``
    (:attr:`Release.records`, exact when the release publishes ``counterfeit_rows``).
    """
    records = []
    wanted = list(terms)
    for release in releases:
        n = max(1, release.records)
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
                    e.expected / n,
                    e.low / n,
                    min(1.0, e.high / n),
                    e.counterfeits_complete,
                    e.guarantee,
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
            "guarantee",
        ],
    )


def _read_off_rows(release: Release, with_x: int) -> Estimate:
    """A public itemset's support: ``with_x`` published rows, of which at most the
    counterfeit rows are not records. Under ``"true_rows"`` a row may have been published
    with some public terms suppressed (a recurring row generalised, design.md §5.8), and
    nothing published says how many: ``high`` is unbounded, ``high_if_unsuppressed`` the
    rows read."""
    counterfeits, complete = counterfeit_bound(release)
    rows = counterfeits - release.global_counterfeits
    generalised = release.guarantee == "true_rows"
    return Estimate(
        expected=float(with_x),
        sd=0.0,
        low=float(max(0, with_x - rows)),
        high=math.inf if generalised else float(with_x),
        published=float(with_x),
        counterfeits=rows,
        suppression=math.inf if generalised else 0.0,
        counterfeits_complete=complete,
        high_if_unsuppressed=float(with_x),
        guarantee=release.guarantee,
    )


def itemset_support(
    release: Release, public_terms: Iterable[str], private_term: str | None = None
) -> Estimate:
    """The support (records) of public itemset X, optionally with one private term s.

    Without s the support is read off the rows: ``published`` rows contain X, of which at
    most the counterfeit rows are not records. With s, ``expected``/``sd`` are the mean and
    spread under random placement (:mod:`app.analysis.placement`) and ``low``/``high`` the
    bounds of :func:`app.analysis.bounds.placement_bounds` on the published copies, widened
    by the counterfeits below and the suppression bound above, and at most the support of X
    and the count of s.
    """
    itemset = frozenset(public_terms)
    clusters = release.clusters
    with_x = np.array([c.rows_with(itemset) for c in clusters], dtype=float)
    if private_term is None:
        return _read_off_rows(release, int(with_x.sum()))
    s = private_term
    sizes = np.array([c.size for c in clusters], dtype=float)
    mean, sd = placement_moments(
        sizes,
        with_x[:, None],
        np.array([[c.n_s(s)] for c in clusters], dtype=float).reshape(-1, 1),
        np.array([release.unplaced_copies(s)]),
    )
    support = float(with_x.sum())
    low, high = placement_bounds(release.n_rows, support, release.published_copies(s))
    return _pair_estimate(
        release,
        (float(mean[0, 0]), float(sd[0, 0])),
        (float(low), float(high)),
        support,
        term_count(release, s),
    )


def _pair_estimate(
    release: Release,
    moments: tuple[float, float],
    placed: tuple[float, float],
    with_x: float,
    count: Estimate,
) -> Estimate:
    """The interval of a support with a private term: the placement bounds ``placed``,
    less the counterfeits below, plus the suppression above, at most the support of X and
    the count of s."""
    counterfeits, complete = counterfeit_bound(release)
    fewest, most = placed
    # Under "true_rows" X's rows too may have lost public terms (design.md §5.8).
    rows_of_x = math.inf if release.guarantee == "true_rows" else with_x
    high = min(most + count.suppression, rows_of_x, count.high)
    return Estimate(
        expected=moments[0],
        sd=moments[1],
        low=min(max(0.0, fewest - counterfeits), high),
        high=high,
        published=moments[0],
        counterfeits=counterfeits,
        suppression=count.suppression,
        counterfeits_complete=complete,
        high_if_unsuppressed=min(most, with_x, count.high),
        guarantee=release.guarantee,
    )


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


def _line(release: Release, items: Sequence[str], kind: str, e: Estimate) -> tuple[object, ...]:
    return (
        release.release_no,
        kind,
        tuple(items),
        len(items),
        round(e.expected, 4),
        round(e.sd, 4),
        round(e.low, 4),
        e.high if math.isinf(e.high) else round(e.high, 4),
        round(e.high_if_unsuppressed, 4),
        e.counterfeits,
        e.suppression,
        e.counterfeits_complete,
        e.guarantee,
    )


def _private_pairs(
    release: Release, frequent: Sequence[str], private: Sequence[str], threshold: float
) -> list[tuple[object, ...]]:
    """The table's lines of (public term, private term) pairs whose expected support
    reaches ``threshold``: :func:`itemset_support`'s figures, as matrices."""
    clusters = [c for c in release.clusters if c.size > 0]
    sizes = np.array([c.size for c in clusters], dtype=float)
    with_x = np.array([[len(c.index.get(t, ())) for t in frequent] for c in clusters], float)
    placed = np.array([[c.n_s(s) for s in private] for c in clusters], dtype=float)
    unplaced = np.array([release.unplaced_copies(s) for s in private], dtype=float)
    means, sds = placement_moments(sizes, with_x, placed, unplaced)
    support = with_x.sum(axis=0)
    lines: list[tuple[int, int, tuple[object, ...]]] = []
    for j, s in enumerate(private):
        count = term_count(release, s)
        for i in np.flatnonzero(means[:, j] >= threshold).tolist():
            low, high = placement_bounds(release.n_rows, support[i], count.published)
            estimate = _pair_estimate(
                release,
                (float(means[i, j]), float(sds[i, j])),
                (float(low), float(high)),
                float(support[i]),
                count,
            )
            lines.append((i, j, _line(release, (frequent[i], s), "public+private", estimate)))
    return [line for *_, line in sorted(lines, key=lambda entry: entry[:2])]


def _public_pairs(
    release: Release, frequent: Sequence[str], threshold: float
) -> list[tuple[object, ...]]:
    together = _co_occurrences(release, frequent)
    lines = []
    for i, j in combinations(range(len(frequent)), 2):
        n = int(together[i, j])
        if n >= threshold:
            estimate = _read_off_rows(release, n)
            lines.append(_line(release, (frequent[i], frequent[j]), "public+public", estimate))
    return lines


def supports_table(
    releases: Sequence[Release], *, min_support: float = 1.0, pairs: str = "private"
) -> pd.DataFrame:
    """Expected supports of terms and pairs, one line each, per release.

    Every private term (its count, :func:`term_count`) and every public term whose support
    reaches ``min_support`` (records; below 1, a share of the release's records,
    :attr:`Release.records`); ``pairs`` adds pairs whose expected support reaches it:
    ``private`` (public x private), ``public`` (public x public), ``all`` (both) or
    ``none``. ``items`` holds each line's terms as a tuple (a term may hold spaces).
    """
    if pairs not in ("private", "public", "all", "none"):
        raise ValueError(f"pairs must be private, public, all or none, not {pairs!r}")
    lines: list[tuple[object, ...]] = []
    for release in releases:
        threshold = min_support if min_support >= 1 else min_support * release.records
        private = sorted(release.private_terms)
        public_counts: dict[str, int] = {}
        for cluster in release.clusters:
            for row in cluster.rows:
                for t in row:
                    public_counts[t] = public_counts.get(t, 0) + 1
        frequent = sorted(t for t, n in public_counts.items() if n >= threshold)
        lines.extend(_line(release, [s], "private", term_count(release, s)) for s in private)
        lines.extend(
            _line(release, [t], "public", _read_off_rows(release, public_counts[t]))
            for t in frequent
        )
        if pairs in ("private", "all") and frequent and private:
            lines.extend(_private_pairs(release, frequent, private, threshold))
        if pairs in ("public", "all") and len(frequent) > 1:
            lines.extend(_public_pairs(release, frequent, threshold))
    return pd.DataFrame.from_records(lines, columns=SUPPORTS_COLUMNS)

"""What a release guarantees about the raw snapshot: the bounds every interval is built from.

A published release differs from its raw snapshot in three ways, each bounded by what the
release publishes (its ``guarantee``, :data:`app.analysis.reader.GUARANTEES`):

- **Counterfeit rows** (``"paper"`` only). Each carries at most one copy of a private term s
  (a row holds a term once), so a count or a support loses at most the counterfeit rows (plus
  the global bag's counterfeit copies, Kanony's ``global_counterfeits``) when they are taken
  out. The count is the release-level ``counterfeit_rows``. A release that does not publish it
  (``counterfeit_counts: "paper"``, or published before the field existed) gives only the sum
  of its clusters' ``counterfeits``, BP and FP1's rows: ``counterfeits_complete`` is then
  ``False`` and a floor built on it may be too high.
- **Suppression** (design.md §5) removes copies of private terms, never adds any. Under
  ``"paper"`` it stays within a published budget (:func:`suppression_bound`); under
  ``"true_rows"`` nothing published says how many copies went, so no upper bound follows
  from the copies alone (``inf``).
- **Where the copies sit.** The copies of s lie on distinct rows of the release; which rows
  is not a fact the release publishes (:func:`placement_bounds`), so a support with a private
  term is bounded by the counts alone (Fréchet's bounds).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from app.analysis.reader import Release

__all__ = [
    "DEFAULT_MAX_SUPPRESSION",
    "DEFAULT_SUPPRESSION_FLOOR",
    "DEFAULT_SUPPRESSION_SCOPE",
    "counterfeit_bound",
    "placement_bounds",
    "suppression_bound",
]

#: design.md §5's defaults, used when a release does not echo its suppression parameters.
DEFAULT_MAX_SUPPRESSION = 0.01
DEFAULT_SUPPRESSION_FLOOR = 3
DEFAULT_SUPPRESSION_SCOPE = "series"


def counterfeit_bound(release: Release) -> tuple[int, bool]:
    """The most copies of one private term that counterfeits may add to ``release``, and
    whether the count is complete: counterfeit rows (:attr:`Release.counterfeit_rows`) plus
    the global bag's counterfeit copies.

    Examples
    --------
    >>> from app.analysis.reader import parse_release
    >>> doc = {"release_no": 1, "counterfeit_rows": 2, "global_counterfeits": 1,
    ...        "clusters": [{"rows": [["a"], ["b"]], "counterfeits": 1}]}
    >>> counterfeit_bound(parse_release(doc))
    (3, True)
    """
    complete = release.counterfeit_rows_total is not None
    return release.counterfeit_rows + release.global_counterfeits, complete


def _param(release: Release, name: str, default: float | str) -> Any:
    value = release.params.get(name, default)
    return default if value is None else value


def suppression_bound(release: Release) -> float:
    """The most private copies ``release`` can have suppressed, from its published copies.

    Under ``guarantee = "true_rows"`` nothing bounds it: ``inf``. Under ``"paper"``, with
    ``P`` the release's published private copies and ``E`` the earlier releases'
    (:attr:`Release.earlier_private_copies`), share ``a = max_suppression`` and
    ``suppression_floor`` f, the budget allows ``supp <= max(f, a (P + supp + E))`` (the
    copies a release counts before the repair are at most ``P + supp``; the series scope's
    earlier copies are at most ``E`` plus what the earlier releases suppressed, which the
    budget takes back), so ``supp <= max(f, a (P + E) / (1 - a))``. ``E = 0`` under
    ``suppression_scope = "release"``. ``inf`` too when the series scope needs ``E`` and the
    earlier releases were not loaded, when ``a >= 1``, or when the release says it
    suppressed beyond its budget (``suppression_beyond_budget``, an escalated release).
    """
    if release.guarantee in ("true_rows", "wong") or release.suppression_beyond_budget:
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


def placement_bounds(
    rows: float | np.ndarray, with_x: float | np.ndarray, copies: float | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Fewest and most of ``rows`` rows that hold both public itemset X and private term s,
    when ``with_x`` rows hold X and ``copies`` copies of s lie on distinct rows, anywhere.

    The release publishes where copies sit only as counts it may move: the global bag's
    copies come from any cluster, and refining (design.md §2.4) gives bag copies back to
    clusters in an order that does not depend on where they came from, so a cluster's
    ``private_terms`` may hold copies of rows elsewhere (measured: 6 of 1,465 pairs of a
    BMS-WebView-1 release below a per-cluster floor). What holds is the release's own:
    ``max(0, copies + with_x - rows)`` (the copies that rows without X cannot take) and
    ``min(copies, with_x)``. Arrays broadcast.

    Examples
    --------
    10 rows, 7 of them holding X, 5 copies of s:

    >>> low, high = placement_bounds(10, 7, 5)
    >>> int(low), int(high)
    (2, 5)
    """
    n = np.asarray(rows, dtype=float)
    m = np.asarray(with_x, dtype=float)
    k = np.asarray(copies, dtype=float)
    return np.maximum(0.0, k + m - n), np.minimum(k, m)

"""Serial risk of a Bayesian adversary who weighs which rows are counterfeits.

Every release publishes how many of its rows are counterfeits (``K``, the release's total) and
every cluster how many BP and FP1 added to it (``k_c``, design.md §3). The paper's adversary
(design.md §4) treats every row as true. An adversary who reads the counts knows better, but
not *which* rows are the counterfeits. Its posterior that a target ``t`` (whose row is true)
holds ``s`` is the paper's posterior on each hypothesis ``D`` of which rows are counterfeits,
weighed by how likely the hypothesis is:

    P(s | t) = Σ_D P(D | scores, k_c, K, t ∉ D) · β(t, s | the rows outside D)

``β`` is formula 12 on the releases without ``D``
(:func:`~app.core.risk.assess.release_risk_from_state` on
:func:`~app.core.attacks.discount.discount_release`: private counts kept, capped at the
cluster's new size, the conservative reading in which the rows of ``D`` carry no copy).
Its serial risk is ``P(s | t) / ss(s)`` (formula 15; the rates are published and stay). The
weights are a detector's odds that a row is a counterfeit (equal odds: an adversary with no
detector, ``blind``; a perfect detector puts all weight on the true ``D`` and gives the
``perfect`` discount of :mod:`~app.core.attacks.frequency_risk`).

This differs from removing the ``k`` rows a detector ranks first and recomputing
(:func:`~app.core.attacks.frequency_risk.discounted_risks`). That adversary acts on one guess
as if it were certain. Removing ``k`` rows known to be true (``control``) puts as many rows
over r_th as removing ``k`` random ones, so the rows it counts are the recomputation's, not a
leak. The mixture is the posterior of an adversary who is right as often as its detector.

It is estimated by Monte Carlo. Each draw takes, per cluster, ``k_c`` rows without
replacement with probability proportional to their weight, then the rest of ``K`` from the
release's other rows likewise (Efraimidis-Spirakis keys ``log(u)/w``). A row's risk is the mean
over the draws that keep it. This respects the published counts; with unequal weights it
approximates the conditional distribution of ``D`` rather than sampling it exactly. The mean of
each draw's *highest* risk per row (the max over terms) bounds the mean for each term from
above.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from app.core.attacks.discount import discount_release
from app.core.model import PublishedRelease
from app.core.risk.assess import release_risk_from_state
from app.core.risk.state import SeriesState

__all__ = [
    "DEFAULT_DRAWS",
    "draw_counterfeits",
    "mixture_risks",
    "published_total",
    "row_means",
]

Floats = NDArray[np.float64]

#: Draws per adversary by default: measured on B1 5 x 3,000 and B2 5 x 5,000 (docs/attacks.md),
#: 16 and 64 draws count the same releases over r_th; the rows counted differ by a few near it.
DEFAULT_DRAWS = 16
#: The smallest weight a row keeps: a row a detector rules out can still be drawn last.
_FLOOR = 1e-12


def published_total(release: PublishedRelease) -> int:
    """``K``: the release's published counterfeit rows, or, for a release stored before the
    total was kept, the sum of its clusters' counts."""
    if release.counterfeit_rows is not None:
        return release.counterfeit_rows
    return sum(c.counterfeits for c in release.clusters)


def draw_counterfeits(
    release: PublishedRelease, weights: Floats, rng: np.random.Generator
) -> list[list[int]]:
    """One hypothesis ``D`` of which rows are counterfeits, per cluster the positions drawn.

    ``k_c`` rows in each cluster, then ``K − Σ k_c`` among the release's other rows, each
    without replacement with probability proportional to ``weights`` (row order).

    >>> from app.core.model import release_from_counts
    >>> r = release_from_counts(1, [([("a",), ("b",)], {}, {}, 1), ([("c",)], {}, {}, 0)], {}, {})
    >>> r.counterfeit_rows = 2
    >>> draw_counterfeits(r, np.array([1e-9, 1.0, 1.0]), np.random.default_rng(0))
    [[1], [0]]
    """
    w = np.maximum(np.asarray(weights, dtype=np.float64), _FLOOR)
    keys = np.log(rng.random(len(w))) / w  # the largest keys are the draws
    chosen: list[list[int]] = []
    taken = np.zeros(len(w), dtype=np.bool_)
    start = 0
    for cluster in release.clusters:
        k = min(cluster.counterfeits, cluster.size)
        if k:
            order = np.argsort(-keys[start : start + cluster.size], kind="stable")[:k]
            taken[start + order] = True
        start += cluster.size
    rest = min(published_total(release), len(w)) - int(taken.sum())
    if rest > 0:
        free = np.flatnonzero(~taken)
        taken[free[np.argsort(-keys[free], kind="stable")[:rest]]] = True
    start = 0
    for cluster in release.clusters:
        chosen.append([int(p) for p in np.flatnonzero(taken[start : start + cluster.size])])
        start += cluster.size
    return chosen


def mixture_risks(
    releases: Sequence[PublishedRelease],
    weights: Mapping[str, Sequence[Floats]],
    r_th: float,
    draws: int = DEFAULT_DRAWS,
    seed: int = 0,
    progress: Callable[[float], None] | None = None,
    scored: Sequence[int] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """The Bayesian adversary's serial risk of every row, per adversary and release.

    Parameters
    ----------
    releases:
        The public series.
    weights:
        Per adversary, one array per release (row order) of odds that a row is a counterfeit;
        ``blind`` (equal odds) is always added.
    r_th:
        The threshold rows are counted over.
    draws:
        Hypotheses ``D`` drawn per adversary.
    progress:
        Called after each draw with the share of all draws done (a long audit shows it,
        and a cancelled job stops there).
    scored:
        The positions of the releases whose rows are scored (default: every release). Every
        release is drawn and composed either way; a job's audit scores its own release only,
        one release's assessment per draw instead of the series' (19 times less at release
        19 of a 20,000-row series: 3.0 against 39.6 s of CPU a draw).

    Returns
    -------
    dict
        Per adversary, per scored release: ``release_no``, ``draws``, ``counterfeits`` (``K``),
        ``rows`` (rows kept by at least one draw, the ones scored), ``rows_over_threshold``
        (mean over r_th), ``rows_surely_over`` (the mean less two standard errors still
        over: over beyond the Monte Carlo's noise) and ``max_serial_risk`` (the largest
        mean).
    """
    every = {"blind": [np.ones(r.n_rows) for r in releases], **weights}
    out: dict[str, list[dict[str, Any]]] = {}
    total = max(len(every) * draws, 1)
    for a, (name, per_release) in enumerate(every.items()):
        done = a * draws

        def drawn(d: int, done: int = done) -> None:
            if progress is not None:
                progress((done + d) / total)

        positions = list(range(len(releases))) if scored is None else list(scored)
        means = row_means(
            releases,
            per_release,
            r_th,
            draws,
            np.random.default_rng([seed, a]),
            drawn,
            positions,
        )
        out[name] = [
            _summary(releases[j], mean, error, r_th, draws)
            for j, (mean, error) in zip(positions, means, strict=True)
        ]
    return out


def row_means(
    releases: Sequence[PublishedRelease],
    weights: Sequence[Floats],
    r_th: float,
    draws: int,
    rng: np.random.Generator,
    drawn: Callable[[int], None] | None = None,
    scored: Sequence[int] | None = None,
) -> list[tuple[Floats, Floats]]:
    """Per scored release (``scored``: positions, default every release), each row's mean
    serial risk over the draws that keep it and the mean's standard error (row order;
    ``nan`` for a row no draw kept, ``inf`` error for a row kept once). ``weights``: one
    array of odds per release; ``drawn`` is told the draws done."""
    positions = list(range(len(releases))) if scored is None else list(scored)
    sums = {j: np.zeros(releases[j].n_rows) for j in positions}
    squares = {j: np.zeros(releases[j].n_rows) for j in positions}
    kept = {j: np.zeros(releases[j].n_rows) for j in positions}
    for d in range(draws):
        reduced = []
        kept_rows = []
        for release, w in zip(releases, weights, strict=True):
            gone = draw_counterfeits(release, np.asarray(w, dtype=np.float64), rng)
            reduced.append(discount_release(release, gone))
            kept_rows.append(_kept_positions(release, gone))
        state = SeriesState.from_published(reduced)
        for j in positions:
            risk = release_risk_from_state(state, j, r_th, with_rows=True)
            values = np.array([row.serial_risk for row in risk.rows], dtype=np.float64)
            sums[j][kept_rows[j]] += values
            squares[j][kept_rows[j]] += values * values
            kept[j][kept_rows[j]] += 1
        if drawn is not None:
            drawn(d + 1)
    out = []
    for j in positions:
        total, square, n = sums[j], squares[j], kept[j]
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = total / n
            variance = np.maximum(square / n - mean * mean, 0.0)
            error = np.where(n > 1, np.sqrt(variance / np.maximum(n - 1, 1)), np.inf)
        out.append((mean, error))
    return out


def _summary(
    release: PublishedRelease, mean: Floats, error: Floats, r_th: float, draws: int
) -> dict[str, Any]:
    """One release's figures from its rows' means and standard errors."""
    limit = r_th * (1 + 1e-9)
    scored = ~np.isnan(mean)
    mean, error = mean[scored], error[scored]
    return {
        "release_no": release.release_no,
        "draws": draws,
        "counterfeits": published_total(release),
        "rows": int(scored.sum()),
        "rows_over_threshold": int((mean > limit).sum()),
        # Over beyond the Monte Carlo's noise: a row kept by one draw only has an infinite
        # error and is never counted here.
        "rows_surely_over": int((mean - 2.0 * error > limit).sum()),
        "max_serial_risk": float(mean.max()) if mean.size else 0.0,
    }


def _kept_positions(release: PublishedRelease, gone: Sequence[Sequence[int]]) -> NDArray[np.intp]:
    """The release-wide positions of the rows a draw keeps, in the reduced release's order."""
    kept: list[int] = []
    start = 0
    for cluster, removed in zip(release.clusters, gone, strict=True):
        out = set(removed)
        kept.extend(start + p for p in range(cluster.size) if p not in out)
        start += cluster.size
    return np.asarray(kept, dtype=np.intp)

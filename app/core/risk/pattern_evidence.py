"""Formula 12's evidence for many row patterns at once (section 2.3.2, design.md §4).

A row's β_global depends only on its *pattern*: its z code in each other release's overlap
(outside, inside, or either). Per term, every pattern's evidence is summed as arrays, one other
release after the other, in release order: the same IEEE additions, in the same order, as
:class:`~app.core.risk.posterior.Evidence` makes for one pattern (a side that says nothing adds
+0.0, which leaves every sum as it was), so each posterior is the same float. Used by the
full assessment (:func:`app.core.risk.assess.global_posteriors`) and by the incremental global
composition of a publication (:mod:`app.core.risk.composition`).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from app.core.risk.likelihood import log_likelihood_ratio
from app.core.risk.overlap import overlap_range
from app.core.risk.posterior import Evidence, best_ratio

__all__ = ["Inputs", "PatternEvidence", "inputs_of", "pattern_evidence", "side_options"]

#: What a term's evidence is computed from: ``N(s)``, ``N`` of the release, and per other
#: release ``(N(O), r1, r2)`` (formulas 6, 13, 14), or ``None`` where the range is empty.
Inputs = tuple[int, int, tuple[tuple[int, int, int] | None, ...]]


@dataclass(slots=True)
class PatternEvidence:
    """The evidence of every pattern of one term: counts of certain evidence and the summed
    finite log ratios, as :class:`Evidence` holds them for one pattern."""

    certain_for: np.ndarray
    certain_against: np.ndarray
    total: np.ndarray

    def at(self, p: int) -> Evidence:
        return Evidence(
            int(self.certain_for[p]), int(self.certain_against[p]), float(self.total[p])
        )


def inputs_of(s: str, n_s: int, n: int, sides: list[tuple[Counter[str], int, int]]) -> Inputs:
    """The :data:`Inputs` of term s held ``n_s`` times in a release of ``n`` rows, against
    other releases given as ``(totals, N, N(O))``."""
    ranges: list[tuple[int, int, int] | None] = []
    for other_totals, other_n, o in sides:
        found = overlap_range(n_s, n, other_totals.get(s, 0), other_n, o) if o else None
        ranges.append(None if found is None else (o, found[0], found[1]))
    return n_s, n, tuple(ranges)


def side_options(n_s: int, n: int, side: tuple[int, int, int]) -> tuple[float, float, float]:
    """One other release's log ratios (formulas 13, 14) for z = 0, z = 1, and the better of
    the two (a pattern's code 0, 1 and 2)."""
    o, r1, r2 = side
    lr0 = log_likelihood_ratio(n_s, n, o, r1, r2, 0)
    lr1 = log_likelihood_ratio(n_s, n, o, r1, r2, 1)
    return lr0, lr1, best_ratio((lr0, lr1))


def pattern_evidence(
    n_s: int, n: int, ranges: tuple[tuple[int, int, int] | None, ...], codes: np.ndarray
) -> PatternEvidence:
    """Formula 12's evidence of every pattern (a row of ``codes``, one column per other
    release): per other release, the log ratio of the pattern's z code, added in release
    order."""
    rows = codes.shape[0]
    certain_for = np.zeros(rows, dtype=np.int64)
    certain_against = np.zeros(rows, dtype=np.int64)
    total = np.zeros(rows, dtype=np.float64)
    for i, side in enumerate(ranges):
        if side is None:
            continue
        options = side_options(n_s, n, side)
        chosen = np.array(options)[codes[:, i]]
        if all(math.isfinite(v) for v in options):
            # Nothing certain nor impossible: the where below would return chosen.
            total = total + chosen
            continue
        certain_for += chosen == math.inf
        certain_against += chosen == -math.inf
        # Adding 0.0 leaves a sum as it is: the same additions as skipping the value.
        total = total + np.where(np.isfinite(chosen), chosen, 0.0)
    return PatternEvidence(certain_for, certain_against, total)

"""Posterior probability over a cover (formula 12), from per-overlap log likelihood ratios.

Formula 12 divided through by ``α·Π P(O|s∈T)`` is a logistic function of the summed log
ratios, ``β = expit(logit(α) + Σ log(P(O|s∈T)/P(O|s∉T)))``, which is how it is computed here:
no product can underflow and no ``0/0`` can occur.

Decisions (design.md §4):

- An overlap whose likelihoods are both zero for the chosen ``z`` is uninformative (skipped).
- Certain evidence against s (a ratio of ``-inf``: ``Π P(O|s∈T) = 0``) gives ``β = 0``, even
  when another overlap is certain for s: formula 12's numerator is then 0 (the auditor's
  reference reads it so, and the service reports what the auditor computes).
- Otherwise certain evidence for s (``Π P(O|s∉T) = 0``) gives ``β = 1``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["Evidence", "best_ratio", "posterior"]


@dataclass(slots=True)
class Evidence:
    """A running sum of log likelihood ratios in the extended reals."""

    certain_for: int = 0
    certain_against: int = 0
    total: float = 0.0

    def add(self, log_ratio: float, sign: int = 1) -> None:
        """Add (``sign=1``) or remove (``sign=-1``) one overlap's log ratio."""
        if math.isnan(log_ratio):
            return
        if log_ratio == math.inf:
            self.certain_for += sign
        elif log_ratio == -math.inf:
            self.certain_against += sign
        else:
            self.total += sign * log_ratio

    def copy(self) -> Evidence:
        return Evidence(self.certain_for, self.certain_against, self.total)

    def posterior(self, alpha: float) -> float:
        """β for prior ``alpha`` given this evidence (formula 12)."""
        if alpha <= 0.0:
            return 0.0
        if alpha >= 1.0:
            return 1.0
        if self.certain_against > 0:
            return 0.0
        if self.certain_for > 0:
            return 1.0
        logit = math.log(alpha) - math.log1p(-alpha) + self.total
        if logit >= 0:
            return 1.0 / (1.0 + math.exp(-logit))
        e = math.exp(logit)
        return e / (1.0 + e)


def best_ratio(options: Iterable[float]) -> float:
    """The most s-favourable of the log ratios of the allowed ``z`` (``nan`` if none is feasible).

    >>> best_ratio([float("nan"), -1.0, 0.5])
    0.5
    """
    feasible = [v for v in options if not math.isnan(v)]
    return max(feasible) if feasible else math.nan


def posterior(alpha: float, log_ratios: Iterable[float]) -> float:
    """β (formula 12) for prior ``alpha`` and the chosen log ratios of a cover.

    >>> posterior(0.5, [float("inf")])  # Example 9, HIV
    1.0
    >>> posterior(0.5, [0.0])  # Example 9, cancer
    0.5
    """
    evidence = Evidence()
    for value in log_ratios:
        evidence.add(value)
    return evidence.posterior(alpha)

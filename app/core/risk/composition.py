"""The global composition of every release while the newest one changes (section 2.3.2).

Each whole release, taken as one cluster, has as cover its overlaps with every other whole
release, and formula 12 multiplies over all of them (SPEC 4, "No weaker adversary"). A row's
posterior depends only on its *pattern*: its z code in each of those overlaps (outside, inside,
or either), so β_global is computed per (pattern, term), as :func:`app.core.risk.assess.
global_posteriors` does.

While Sanony builds release ``j``, only ``j`` changes. What this class keeps between calls,
and why it stays exact:

- the patterns of every row: a row's code against release ``j`` moves only when the row's
  multiplicity in ``j`` does, so only rows of :attr:`SeriesState.row_log` are redone;
- ``N(O)`` of whole releases, which :class:`SeriesState` keeps up to date;
- per release and term, the summed evidence of each pattern (formula 12 without its prior),
  reused while the term's likelihood ratios (formulas 13, 14, cached on their six integers)
  are the same, and the posterior per pattern while the prior ``N(s)/N`` is the same too.

The arithmetic is the same sequence of operations as from scratch, so the values are the same.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from app.core.model import Row
from app.core.risk.assess import serial_risk
from app.core.risk.likelihood import log_likelihood_ratio
from app.core.risk.overlap import overlap_range
from app.core.risk.posterior import Evidence, best_ratio
from app.core.risk.state import SeriesState

__all__ = ["GlobalComposition", "Pattern", "z_code"]

#: A row's z code in the overlap with each other whole release, in release order.
Pattern = tuple[int, ...]

#: Log likelihood ratios for z = 0 and z = 1 against one other release, or ``None`` where the
#: overlap says nothing of s (empty range, formula 6).
_Ratios = tuple[float, float] | None


def z_code(in_overlap: int, in_cluster: int) -> int:
    """How a row with ``in_cluster`` copies in its view sits in an overlap holding
    ``in_overlap`` of them: 0 outside (z = 0), 1 inside (z = 1), 2 either (SPEC 4 decision:
    the adversary takes the larger posterior).

    >>> z_code(0, 3), z_code(3, 3), z_code(1, 3)
    (0, 1, 2)
    """
    if in_overlap == 0:
        return 0
    return 1 if in_overlap == in_cluster else 2


def _choose(lr0: float, lr1: float, code: int) -> float:
    if code == 0:
        return lr0
    if code == 1:
        return lr1
    return best_ratio((lr0, lr1))


#: What a term's evidence is computed from: ``N(s)``, ``N`` of the release, and per other
#: release ``(N(O), r1, r2)`` (formulas 6, 13, 14), or ``None`` where the range is empty.
_Inputs = tuple[int, int, tuple[tuple[int, int, int] | None, ...]]


@dataclass(slots=True)
class _Term:
    """One term of one release: the inputs of its ratios, the evidence per pattern, and the
    patterns over ``r_th`` with their risk for the published rate ``rate``."""

    inputs: _Inputs
    evidence: dict[Pattern, Evidence] = field(default_factory=dict)
    rate: float | None = None
    over: list[tuple[Pattern, float]] = field(default_factory=list)


@dataclass(slots=True)
class _Release:
    """The patterns of one release's rows and its per-term cache."""

    others: list[int]
    pattern_of: dict[Row, Pattern]
    patterns: Counter[Pattern]
    terms: dict[str, _Term] = field(default_factory=dict)
    #: ``totals()`` of a release that does not change (every release but the newest).
    totals: Counter[str] | None = None


class GlobalComposition:
    """β_global of the rows of every release of ``state``, kept up to date while release
    ``j`` (the newest) changes; rows are judged against ``limit`` (``r_th`` with its
    tolerance)."""

    def __init__(self, state: SeriesState, j: int, limit: float) -> None:
        self.state = state
        self.j = j
        self.limit = limit
        self._releases: dict[int, _Release] = {}
        self._log_read = len(state.row_log)

    def pattern_of(self, k: int) -> dict[Row, Pattern]:
        """Each distinct row of release ``k`` and its pattern."""
        return self._release(k).pattern_of

    def over(self, k: int) -> dict[Pattern, list[tuple[str, float]]]:
        """Per pattern of release ``k``, the terms whose serial risk (formula 15, β_global over
        the release's published rate) exceeds the limit, with that risk, in the order of the
        release's ``totals()``."""
        self._replay()
        release = self.state.releases[k]
        cache = self._release(k)
        totals = cache.totals if cache.totals is not None else release.totals()
        if k != self.j and cache.totals is None:
            cache.totals = totals
        sides = [
            (self._totals(other), self.state.releases[other].n, self.state.overlap_size(k, other))
            for other in cache.others
        ]
        over: dict[Pattern, list[tuple[str, float]]] = {}
        for s, n_s in totals.items():
            term = self._term(cache, s, n_s, release.n, sides, release.rates.get(s, 0.0))
            for pattern, risk in term.over:
                over.setdefault(pattern, []).append((s, risk))
        return over

    # -- patterns ------------------------------------------------------------------------

    def _release(self, k: int) -> _Release:
        found = self._releases.get(k)
        if found is None:
            others = [other for other in range(len(self.state.releases)) if other != k]
            pattern_of = {
                row: self._pattern(k, others, row) for row in self.state.releases[k].row_counts
            }
            found = _Release(others, pattern_of, Counter(pattern_of.values()))
            self._releases[k] = found
        return found

    def _pattern(self, k: int, others: list[int], row: Row) -> Pattern:
        mult = self.state.releases[k].row_counts[row]
        return tuple(
            z_code(min(mult, self.state.releases[other].row_counts.get(row, 0)), mult)
            for other in others
        )

    def _replay(self) -> None:
        """Redo the patterns of the rows whose multiplicity in release ``j`` moved."""
        log = self.state.row_log
        if self._log_read == len(log):
            return
        rows = {row for k, row in log[self._log_read :] if k == self.j}
        self._log_read = len(log)
        for k, cache in self._releases.items():
            counts = self.state.releases[k].row_counts
            for row in rows:
                old = cache.pattern_of.pop(row, None)
                if old is not None:
                    cache.patterns[old] -= 1
                    if not cache.patterns[old]:
                        del cache.patterns[old]
                if row in counts:
                    new = self._pattern(k, cache.others, row)
                    cache.pattern_of[row] = new
                    cache.patterns[new] += 1

    def _totals(self, k: int) -> Counter[str]:
        if k == self.j:
            return self.state.releases[k].totals()
        cache = self._release(k)
        if cache.totals is None:
            cache.totals = self.state.releases[k].totals()
        return cache.totals

    # -- formula 12 per term -------------------------------------------------------------

    def _term(
        self,
        cache: _Release,
        s: str,
        n_s: int,
        n: int,
        sides: list[tuple[Counter[str], int, int]],
        rate: float,
    ) -> _Term:
        ranges: list[tuple[int, int, int] | None] = []
        for other_totals, other_n, o in sides:
            found = overlap_range(n_s, n, other_totals.get(s, 0), other_n, o) if o else None
            ranges.append(None if found is None else (o, found[0], found[1]))
        inputs: _Inputs = (n_s, n, tuple(ranges))
        term = cache.terms.get(s)
        if term is None or term.inputs != inputs:
            term = _Term(inputs)
            cache.terms[s] = term
        fresh = [pattern for pattern in cache.patterns if pattern not in term.evidence]
        if fresh:
            ratios = [
                None
                if side is None
                else (
                    log_likelihood_ratio(n_s, n, side[0], side[1], side[2], 0),
                    log_likelihood_ratio(n_s, n, side[0], side[1], side[2], 1),
                )
                for side in ranges
            ]
            for pattern in fresh:
                term.evidence[pattern] = _evidence(pattern, ratios)
        if fresh or term.rate != rate:
            term.rate = rate
            alpha = min(n_s / n, 1.0)
            term.over = []
            for pattern in cache.patterns:
                risk = serial_risk(term.evidence[pattern].posterior(alpha), rate)
                if risk > self.limit:
                    term.over.append((pattern, risk))
        elif any(pattern not in cache.patterns for pattern, _ in term.over):
            term.over = [(p, risk) for p, risk in term.over if p in cache.patterns]
        return term


def _evidence(pattern: Pattern, ratios: list[_Ratios]) -> Evidence:
    evidence = Evidence()
    for code, pair in zip(pattern, ratios, strict=True):
        if pair is not None:
            evidence.add(_choose(pair[0], pair[1], code))
    return evidence

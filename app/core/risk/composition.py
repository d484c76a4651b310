"""The global composition of every release while the newest one changes (section 2.3.2).

Each whole release, taken as one cluster, has as cover its overlaps with every other whole
release, and formula 12 multiplies over all of them (design.md §4, "No weaker adversary"). A row's
posterior depends only on its *pattern*: its z code in each of those overlaps (outside, inside,
or either), so β_global is computed per (pattern, term), as
:func:`app.core.risk.assess.global_posteriors` does.

While Sanony builds release ``j``, only ``j`` changes. What this class keeps between calls,
and why it stays exact:

- the patterns of every row: a row's code against release ``j`` moves only when the row's
  multiplicity in ``j`` does, so only rows of :attr:`SeriesState.row_log` are redone;
- ``N(O)`` of whole releases, which :class:`SeriesState` keeps up to date;
- per release and term, the patterns over ``r_th``, reused while every input of the term's
  formula 12 is the same (``N(s)``, ``N``, each overlap's ``N(O)`` and range ``[r1, r2]``, the
  published rate, the set of patterns, which carries a version bumped when it changes);
- per published release and term, the evidence from every release but ``j`` (so that the
  cost stays flat in the series' length). Of a published release's formula 12 only the factor of
  its overlap with ``j`` moves while ``j`` is built: the other releases, their totals and
  overlaps are fixed, and so is each row's z code against them (its *fixed pattern*). That
  part is summed once per publication per fixed pattern (shared by the terms whose inputs
  are the same) and a round adds ``j``'s column alone, so a round costs the patterns times the
  stale terms per release, not that times the number of releases.

The evidence of all patterns of a term is summed as arrays, one other release after the other,
which is the same sequence of float additions as :class:`~app.core.risk.posterior.Evidence`.
``j`` is the newest release, the last of every published release's others, so the fixed part
is the sum's prefix and adding ``j``'s column to it performs the very additions of summing
every column from scratch.
A vectorised posterior picks the candidate patterns, with a margin far wider than any rounding;
the candidates' risk is then computed by :meth:`Evidence.posterior`, the scalar function every
other path uses, so the rows reported and their risk are exactly those of judging from scratch.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import cast

import numpy as np

from app.core.model import Row
from app.core.risk.assess import serial_risk
from app.core.risk.likelihood import RatioKey, log_likelihood_ratios
from app.core.risk.pattern_evidence import (
    Inputs,
    PatternEvidence,
    inputs_of,
    pattern_evidence,
    side_options,
)
from app.core.risk.state import SeriesState, row_count_matrix

__all__ = ["GlobalComposition", "Pattern", "z_code"]

#: A row's z code in the overlap with each other whole release, in release order, one byte
#: each. Bytes rather than a tuple of ints: a pattern is about one per distinct row of every
#: release, and at release 20 of the 20,000-row series a tuple of 19 codes held 192 bytes, the
#: bytes 52 (37 MiB of the peak). They compare and sort as the tuples did.
Pattern = bytes

#: Terms of the new release summed together (:meth:`GlobalComposition._over_block`): arrays
#: of this many terms times the release's patterns.
_BLOCK = 64

#: Relative margin below the threshold within which a pattern's posterior is still checked
#: exactly; rounding moves a posterior by about 1e-16 of itself.
_MARGIN = 1e-9


def z_code(in_overlap: int, in_cluster: int) -> int:
    """How a row with ``in_cluster`` copies in its view sits in an overlap holding
    ``in_overlap`` of them: 0 outside (z = 0), 1 inside (z = 1), 2 either (design.md §4 decision:
    the adversary takes the larger posterior).

    >>> z_code(0, 3), z_code(3, 3), z_code(1, 3)
    (0, 1, 2)
    """
    if in_overlap == 0:
        return 0
    return 1 if in_overlap == in_cluster else 2


def _pattern(mult: int, row: Row, theirs: list[Counter[Row]]) -> Pattern:
    """The pattern of a row held ``mult`` times, given the other releases' row counts: the
    z code of :func:`z_code`, inline (``min(mult, m) == mult`` exactly when ``m >= mult``)."""
    return bytes(
        [0 if (m := other.get(row, 0)) == 0 else 1 if m >= mult else 2 for other in theirs]
    )


#: A pattern code (0 outside, 1 inside, 2 either) as the matrices hold it: one byte, used only
#: to index a side's three options. As int64 the matrices of release 20 of the 20,000-row
#: series held 57 MB (patterns are nearly one per distinct row there).
_CODE = np.int8


@dataclass(slots=True)
class _Term:
    """One term of one release: what its posteriors were computed from, and the patterns over
    the limit with their serial risk. For a published release whose fixed part is kept
    (:class:`_Fixed`), ``inputs`` holds ``j``'s side only: the others do not move."""

    inputs: Inputs
    rate: float
    patterns: int
    over: list[tuple[Pattern, float]]


@dataclass(slots=True)
class _Fixed:
    """What of a published release's formula 12 stays while ``j`` is built: its rows' codes
    against every other release but ``j`` (``j`` is the last column of every pattern), and per
    term the evidence of those columns (design.md §4, formula 12)."""

    #: Each fixed pattern (a pattern without its last column), sorted, as one numpy void
    #: array (:func:`_prefixes`): its position is its row in ``codes``. There is about one
    #: per distinct row: as a dictionary from bytes they were 19 MiB of release 20's peak on
    #: the 20 x 20,000 series.
    index: np.ndarray
    codes: np.ndarray
    #: ``(totals, N, N(O))`` of every other release but ``j``, in release order.
    sides: list[tuple[Counter[str], int, int]]
    #: Per term, the inputs of formula 12 over the fixed releases.
    inputs: dict[str, Inputs] = field(default_factory=dict)
    #: Per such inputs, the sum of each fixed side's largest log ratio (:func:`_top`), or
    #: ``None`` where a side may be certain evidence for s: a bound on every fixed pattern's
    #: sum, from scalars alone (:meth:`GlobalComposition._ruled_out`).
    tops: dict[Inputs, float | None] = field(default_factory=dict)
    #: Per such inputs, the highest sum of a fixed pattern without certain evidence against
    #: s, and whether one holds certain evidence for it: summed over the patterns only for
    #: a term that its :attr:`tops` cannot rule out.
    peaks: dict[Inputs, tuple[float, bool]] = field(default_factory=dict)
    #: Per such inputs, the evidence of every fixed pattern, kept only for terms some round
    #: could not rule out: terms whose inputs are equal share it (the same additions).
    evidence: dict[Inputs, PatternEvidence] = field(default_factory=dict)


@dataclass(slots=True)
class _Release:
    """The patterns of one release's rows and its per-term cache."""

    others: list[int]
    pattern_of: dict[Row, Pattern]
    patterns: Counter[Pattern]
    terms: dict[str, _Term] = field(default_factory=dict)
    #: Bumped when the set of patterns changes; ``codes`` is its matrix (pattern x other).
    version: int = 0
    #: Set when a pattern may have come or gone (:meth:`GlobalComposition._replay`), so that
    #: the matrix is compared with the patterns only then, not at every call.
    moved: bool = True
    listed: list[Pattern] = field(default_factory=list)
    codes: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=_CODE))
    #: Per listed pattern, the row of its fixed pattern in ``fixed.codes``.
    fixed_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.intp))
    #: The part that stays while ``j`` is built; ``None`` for ``j`` itself.
    fixed: _Fixed | None = None

    def matrix(self) -> tuple[list[Pattern], np.ndarray]:
        if not self.moved:
            return self.listed, self.codes
        self.moved = False
        if len(self.listed) != len(self.patterns) or any(
            p not in self.patterns for p in self.listed
        ):
            self.listed = list(self.patterns)
            self.codes = np.frombuffer(b"".join(self.listed), dtype=_CODE).reshape(
                len(self.listed), len(self.others)
            )
            if self.fixed is not None:
                self.fixed_rows = _fixed_rows(self.fixed.index, self.codes)
            self.version += 1
        return self.listed, self.codes


def _prefixes(codes: np.ndarray) -> np.ndarray:
    """Each row of a pattern matrix without its last column, as one numpy void scalar (the
    bytes of its codes): sortable and searchable as a whole. Without other columns (a
    release against ``j`` alone) every prefix is the same, one byte of 0 standing for it."""
    width = codes.shape[1] - 1
    if width <= 0:
        return np.zeros(len(codes), dtype=np.dtype((np.void, 1)))
    return np.ascontiguousarray(codes[:, :-1]).view(np.dtype((np.void, width))).ravel()


def _fixed_rows(index: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Per row of ``codes`` (patterns, ``j`` last), the row of its fixed pattern in
    :attr:`_Fixed.codes`: its position in the sorted ``index``. A published row's fixed
    pattern does not change while ``j`` is built, so every one is there."""
    return np.searchsorted(index, _prefixes(codes)).astype(np.intp, copy=False)


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
        self._new_totals: Counter[str] = Counter()
        #: ``totals()`` of the releases that do not change (every release but ``j``).
        self._published_totals: dict[int, Counter[str]] = {}
        #: Their row counts as a matrix (:func:`row_count_matrix`), for their patterns.
        self._counts: tuple[list[np.ndarray], np.ndarray] | None = None

    def refresh(self) -> None:
        """Take in what changed in release ``j`` since the last call."""
        self._replay()
        self._new_totals = self.state.releases[self.j].totals()

    def pattern_of(self, k: int) -> dict[Row, Pattern]:
        """Each distinct row of release ``k`` and its pattern."""
        return self._release(k).pattern_of

    def over(self, k: int) -> dict[Pattern, list[tuple[str, float]]]:
        """Per pattern of release ``k``, the terms whose serial risk (formula 15, β_global over
        the release's published rate) exceeds the limit, with that risk, in the order of the
        release's ``totals()``. Call :meth:`refresh` first after ``j`` changed."""
        release = self.state.releases[k]
        cache = self._release(k)
        listed, _ = cache.matrix()
        # Where release k keeps a fixed part, j's side is the only input that moves.
        sides = self._sides(k, cache, None, None)
        totals = self._totals(k)
        stale: list[tuple[str, Inputs, float]] = []
        for s, n_s in totals.items():
            rate = release.rates.get(s, 0.0)
            inputs = inputs_of(s, n_s, release.n, sides)
            term = cache.terms.get(s)
            if (
                term is None
                or term.inputs != inputs
                or term.rate != rate
                or term.patterns != cache.version
            ):
                stale.append((s, inputs, rate))
        if cache.fixed is not None:
            self._prepare_fixed(k, cache, [(s, inputs[0]) for s, inputs, _ in stale])
            # Terms whose rows cannot reach the limit whatever j's side adds need no arrays.
            judged: list[tuple[str, Inputs, float]] = []
            for s, inputs, rate in stale:
                if self._ruled_out(cache, s, inputs, rate):
                    cache.terms[s] = _Term(inputs, rate, cache.version, [])
                else:
                    judged.append((s, inputs, rate))
            stale = judged
        # The likelihood ratios of every stale term at once (formulas 13, 14).
        log_likelihood_ratios([key for _, inputs, _ in stale for key in _ratio_keys(inputs)])
        if cache.fixed is None:
            # Release j: every input moves each round; its terms are summed together, but
            # only those whose rows could reach the limit (most cannot, on long series).
            judged = []
            for s, inputs, rate in stale:
                if self._own_ruled_out(inputs, rate):
                    cache.terms[s] = _Term(inputs, rate, cache.version, [])
                else:
                    judged.append((s, inputs, rate))
            stale = judged
            for first in range(0, len(stale), _BLOCK):
                block = stale[first : first + _BLOCK]
                for (s, inputs, rate), over_limit in zip(
                    block, self._over_block(block, listed, cache.codes), strict=True
                ):
                    cache.terms[s] = _Term(inputs, rate, cache.version, over_limit)
        for s, inputs, rate in stale if cache.fixed is not None else ():
            over_limit = self._over(inputs, rate, listed, self._evidence_of(cache, s, inputs))
            cache.terms[s] = _Term(inputs, rate, cache.version, over_limit)
        over: dict[Pattern, list[tuple[str, float]]] = {}
        for s in totals:
            for pattern, risk in cache.terms[s].over:
                over.setdefault(pattern, []).append((s, risk))
        return over

    def least_total(self, s: str, start: int, stop: int, rate: float | None = None) -> int | None:
        """The least count ``c`` in ``[start, stop]`` of term s in release ``j`` (cluster
        segments plus global bag) at which no row of any release is over the limit for s
        through the global composition, or ``None`` when none in the range is.

        Release ``j``'s rate for s is ``c / N`` (what ``population_rates`` publishes), or
        ``max(rate, c / N)`` when a rate is given (rates already fixed, raised by a lift);
        every other input is as the series stands. This is what the adversary of
        design.md §4 asks of a count, where Lemma 4 (formulas 16-18) asks the new release to keep
        every published range whole: the least lift that keeps the composition safe, not the
        most a published count could demand. Call :meth:`refresh` first.
        """
        for c in range(start, stop + 1):
            if not self._term_over(s, c, rate):
                return c
        return None

    def most_total(self, s: str, stop: int, own_limit: float | None = None) -> int | None:
        """The largest count ``c`` in ``[0, stop]`` of term s in release ``j`` at which no row
        of any release is over the limit for s through the global composition, release
        ``j``'s rate being ``c / N``; ``None`` when none is.

        For a publication that may only lower counts (suppression, design.md §5.8): a count
        above a published one lifts the new release's rows outside the overlap, a count below
        lifts the published release's, so the counts that are safe form a range, and its top
        is the most that may be published. The search takes ``stop`` when it is safe, else
        steps down by doubling strides to a safe count and bisects back up; below 64 it
        scans, so a narrow range is not stepped over. ``own_limit``: a lower limit for the
        rows of release ``j`` alone (a reserve for the releases to come). Call
        :meth:`refresh` first."""

        def over(c: int) -> bool:
            return self._term_over(s, c, own_limit=own_limit)

        if not over(stop):
            return stop
        if stop <= 64:
            return next((c for c in range(stop - 1, -1, -1) if not over(c)), None)
        high, stride, low = stop, 1, None
        while low is None:
            c = max(stop - stride, 0)
            if not over(c):
                low = c
            elif c == 0:
                return None
            else:
                high, stride = c, 2 * stride
        while high - low > 1:
            middle = (low + high) // 2
            if over(middle):
                high = middle
            else:
                low = middle
        return low

    def least_dilution(self, s: str, c: int, rate: float, stop: int) -> int | None:
        """The least number ``d`` in ``[1, stop]`` of rows without s that, added to release
        ``j`` outside every overlap (N grows, each N(O) stays), leave no row of any release
        over the limit for s through the global composition with ``c`` copies of s in ``j``
        and ``j``'s published rate ``rate`` (fixed, formula 15); ``None`` when ``stop`` rows
        do not.

        For a term pinned from both sides at the level of whole releases: with ``c - 1``
        copies a published release's rows are over, with ``c`` the new release's own rows
        (release 5 of the 40,000-row core series: release 2's rows at 8.77 with 4 copies,
        release 5's at 8.77 with 5). Rows of ``j`` outside an overlap carry the copies the
        other release caps it at (formulas 5, 6, 13), so their posterior is about
        ``(c - r2) / (N - N(O))``: more rows outside every overlap lower it, and nothing else
        in the composition moves. The search doubles ``d``, then bisects; the post-condition
        judges the rows actually added."""
        if not self._term_over(s, c, rate, 0):
            return 0
        low, high = 0, 1
        while self._term_over(s, c, rate, high):
            if high >= stop:
                return None
            low, high = high, min(2 * high, stop)
        while high - low > 1:
            middle = (low + high) // 2
            if self._term_over(s, c, rate, middle):
                low = middle
            else:
                high = middle
        return high

    def _term_over(
        self,
        s: str,
        c: int,
        fixed_rate: float | None = None,
        extra_rows: int = 0,
        own_limit: float | None = None,
    ) -> bool:
        """Whether some row of some release is over the limit for s with ``c`` copies of s in
        release ``j`` (formula 12 over the whole releases, formula 15), ``j`` holding
        ``extra_rows`` more rows outside every overlap (their pattern judged with the
        others). A published release's evidence from the releases but ``j`` is its fixed
        part, summed once (:class:`_Fixed`)."""
        new = self.state.releases[self.j]
        new_n = new.n + extra_rows
        for k, release in enumerate(self.state.releases):
            cache = self._release(k)
            listed, _ = cache.matrix()
            if not listed:
                continue
            n = release.n
            if k == self.j:
                n_s, n = c, new_n
                follows = c / n if n else 0.0
                rate = follows if fixed_rate is None else max(fixed_rate, follows)
            else:
                n_s, rate = self._totals(k).get(s, 0), release.rates.get(s, 0.0)
            if not n_s:
                continue
            inputs = inputs_of(s, n_s, n, self._sides(k, cache, s, c, extra_rows))
            if cache.fixed is not None:
                self._prepare_fixed(k, cache, [(s, n_s)])
                if self._ruled_out(cache, s, inputs, rate):
                    continue
            evidence_of = self._evidence_of(cache, s, inputs)
            if k == self.j and extra_rows and bytes(len(cache.others)) not in cache.patterns:
                # The rows added are outside every overlap: judge that pattern too.
                listed = [*listed, bytes(len(cache.others))]
                codes = np.vstack([cache.codes, np.zeros((1, len(cache.others)), _CODE)])
                evidence_of = partial(pattern_evidence, *inputs, codes)
            limit = own_limit if k == self.j and own_limit is not None else None
            if self._over(inputs, rate, listed, evidence_of, limit):
                return True
        return False

    def _sides(
        self, k: int, cache: _Release, s: str | None, c: int | None, extra_rows: int = 0
    ) -> list[tuple[Counter[str], int, int]]:
        """``(totals, N, N(O))`` of the releases whose side of release ``k``'s formula 12 is
        an input that can move: ``j``'s alone where ``k`` keeps a fixed part, else every
        other release's. With ``s`` and ``c``, ``j`` holds ``c`` copies of s, and
        ``extra_rows`` more rows outside every overlap."""
        others = cache.others if cache.fixed is None else [self.j]
        return [
            (
                Counter({s: c})
                if other == self.j and s is not None and c is not None
                else self._totals(other),
                self.state.releases[other].n + (extra_rows if other == self.j else 0),
                self.state.overlap_size(k, other),
            )
            for other in others
        ]

    # -- patterns ------------------------------------------------------------------------

    def _release(self, k: int) -> _Release:
        found = self._releases.get(k)
        if found is None:
            others = [other for other in range(len(self.state.releases)) if other != k]
            pattern_of = self._patterns(k, others)
            found = _Release(others, pattern_of, Counter(pattern_of.values()))
            if k != self.j and others and others[-1] == self.j:
                # Every column but the last (j's) stays while j is built.
                every = np.frombuffer(b"".join(found.patterns), dtype=_CODE).reshape(
                    len(found.patterns), len(others)
                )
                index, first = np.unique(_prefixes(every), return_index=True)
                codes = np.ascontiguousarray(every[first, :-1])
                sides = [
                    (
                        self._totals(other),
                        self.state.releases[other].n,
                        self.state.overlap_size(k, other),
                    )
                    for other in others[:-1]
                ]
                found.fixed = _Fixed(index, codes, sides)
            self._releases[k] = found
        return found

    def _patterns(self, k: int, others: list[int]) -> dict[Row, Pattern]:
        """The pattern of every row of release ``k``, what :func:`_pattern` gives: for a
        published release from the matrix of the published releases' row counts (they do not
        change while ``j`` is built) and ``j``'s counts of its rows, as arrays; for ``j``
        through the index of the releases that hold each row."""
        if k == self.j:
            return self._own_patterns(k, others)
        if self._counts is None:
            self._counts = row_count_matrix(self.state.releases, skip=self.j)
        columns, counts = self._counts
        mine = self.state.releases[k].row_counts
        if not mine or not others:
            return dict.fromkeys(mine, b"")
        theirs = counts[others][:, columns[k]]
        if self.j in others:
            new = self.state.releases[self.j].row_counts
            theirs[others.index(self.j)] = [new.get(row, 0) for row in mine]
        codes = np.where(theirs == 0, 0, np.where(theirs >= counts[k, columns[k]], 1, 2))
        # Each distinct pattern is one bytes object shared by its rows (as in _own_patterns):
        # one per row, the patterns alone held a copy per row of every release.
        table = np.ascontiguousarray(codes.T, dtype=_CODE)
        # One bytes object per row: numpy's stubs type tolist() of a void array loosely.
        keys = cast(list[bytes], table.view(np.dtype((np.void, table.shape[1]))).ravel().tolist())
        shared: dict[Pattern, Pattern] = {}
        return {row: shared.setdefault(key, key) for row, key in zip(mine, keys, strict=True)}

    def _own_patterns(self, k: int, others: list[int]) -> dict[Row, Pattern]:
        """The pattern of every row of release ``k``, what :func:`_pattern` gives, found through
        the index of the releases that hold each row: a row is held by a few releases, so this
        costs the rows times their holders, not the rows times every release."""
        releases = self.state.releases
        column = {other: i for i, other in enumerate(others)}
        zeros = [0] * len(others)
        found: dict[Row, Pattern] = {}
        # Equal patterns share one object (one code per other release, per distinct row of
        # every release, grows as rows x releases^2). Against 19 other releases the patterns
        # are nearly one per row and sharing saved 11 MiB of release 20's peak on the
        # 20,000-row series; in shorter series they repeat more.
        shared: dict[Pattern, Pattern] = {}
        for row, mult in releases[k].row_counts.items():
            codes = zeros.copy()
            for other in {ref[0] for ref in self.state.holders(row)}:
                if other != k:
                    m = releases[other].row_counts.get(row, 0)
                    codes[column[other]] = 0 if m == 0 else 1 if m >= mult else 2
            pattern = bytes(codes)
            found[row] = shared.setdefault(pattern, pattern)
        return found

    def _replay(self) -> None:
        """Redo the patterns of the rows whose multiplicity in release ``j`` moved: only their
        last column (``j``'s) where the release keeps a fixed part."""
        log = self.state.row_log
        if self._log_read == len(log):
            return
        rows = {row for k, row in log[self._log_read :] if k == self.j}
        self._log_read = len(log)
        new_counts = self.state.releases[self.j].row_counts
        for k, cache in self._releases.items():
            counts = self.state.releases[k].row_counts
            for row in rows:
                old = cache.pattern_of.get(row)
                new: Pattern | None = None
                if row in counts:
                    if old is not None and cache.fixed is not None:
                        # z_code of the row against j, as _pattern computes it.
                        mult, m = counts[row], new_counts.get(row, 0)
                        new = old[:-1] + (b"\x00" if m == 0 else b"\x01" if m >= mult else b"\x02")
                    else:
                        theirs = [self.state.releases[other].row_counts for other in cache.others]
                        new = _pattern(counts[row], row, theirs)
                if new == old:
                    continue
                if old is not None:
                    del cache.pattern_of[row]
                    cache.patterns[old] -= 1
                    if not cache.patterns[old]:
                        del cache.patterns[old]
                        cache.moved = True
                if new is not None:
                    cache.pattern_of[row] = new
                    if not cache.patterns[new]:
                        cache.moved = True
                    cache.patterns[new] += 1

    def _totals(self, k: int) -> Counter[str]:
        if k == self.j:
            return self._new_totals
        found = self._published_totals.get(k)
        if found is None:
            found = self._published_totals[k] = self.state.releases[k].totals()
        return found

    # -- formula 12 per term -------------------------------------------------------------

    def _prepare_fixed(self, k: int, cache: _Release, terms: list[tuple[str, int]]) -> None:
        """The fixed part's inputs and bound (:attr:`_Fixed.tops`) of each of ``terms``
        (``(s, N(s))`` of release ``k``) not prepared yet in this publication, their
        likelihood ratios computed at once.

        Only scalars: per term, the largest ratio of each fixed side. The patterns' arrays
        (:attr:`_Fixed.peaks`) are summed only for a term the bound cannot rule out
        (:meth:`_ruled_out`). On release 20 of the 20,000-row BMS-WebView-2 series the bound
        ruled out every one of 13,262 (release, term) judgements that the peak did, and the
        peaks' arrays had cost 5,500 sums over every fixed pattern per publication."""
        fixed = cache.fixed
        assert fixed is not None
        n = self.state.releases[k].n
        missing: list[Inputs] = []
        for s, n_s in terms:
            if s in fixed.inputs:
                continue
            inputs = inputs_of(s, n_s, n, fixed.sides)
            fixed.inputs[s] = inputs
            if inputs not in fixed.tops:
                missing.append(inputs)
        if not missing:
            return
        log_likelihood_ratios([key for inputs in missing for key in _ratio_keys(inputs)])
        for inputs in missing:
            if inputs not in fixed.tops:
                fixed.tops[inputs] = _top(inputs)

    def _ruled_out(self, cache: _Release, s: str, inputs: Inputs, rate: float) -> bool:
        """Whether no pattern of a published release can be a candidate of
        :func:`_candidates` for the term, from the fixed part's bound or peak and ``j``'s side
        (``inputs``) alone; exact, as the float sums only grow with what is added: a pattern's
        sum is the fixed sum plus one of j's log ratios (+0.0 where it is not finite, none
        where it is -inf), both at most the bound (or peak) and the largest ratio. The
        bound is tried first; a term it leaves open is judged by the peak, as before."""
        fixed = cache.fixed
        assert fixed is not None
        key = fixed.inputs[s]
        bound = self.limit * rate
        # Every fixed pattern's sum is at most the top: the same additions, in the same order,
        # of values each at most the side's largest, and rounding is monotone.
        top = fixed.tops[key]
        if top is not None and _below_line(top, inputs, bound):
            return True
        found = fixed.peaks.get(key)
        if found is None:
            found = fixed.peaks[key] = _peak(pattern_evidence(*key, fixed.codes))
        peak, certain = found
        if certain and inputs[0] > 0:
            return False
        return _below_line(peak, inputs, bound)

    def _own_ruled_out(self, inputs: Inputs, rate: float) -> bool:
        """Whether no pattern of release ``j`` can be a candidate of :func:`_candidates` for
        the term: the largest log ratio a pattern may take from each other release, summed
        in release order, leaves the log-odds at or below the candidates' line. Exact, as
        :meth:`_over_block` sums one of the same options per release (+0.0 where it is not
        finite) in the same order, and float addition rounds monotonically, so no pattern's
        sum exceeds this one. On release 20 of the 20,000-row BMS-WebView-2 series
        the blocks summed every term of the release, every round, for 18% of the time."""
        return _below_line(0.0, inputs, self.limit * rate)

    def _evidence_of(
        self, cache: _Release, s: str, inputs: Inputs
    ) -> Callable[[], PatternEvidence]:
        """The evidence of every listed pattern of a release for the term: summed over every
        side, or the fixed part's sums with ``j``'s column added (the same additions)."""
        fixed = cache.fixed
        if fixed is None:
            return lambda: pattern_evidence(*inputs, cache.codes)
        key = fixed.inputs[s]

        def extended() -> PatternEvidence:
            part = fixed.evidence.get(key)
            if part is None:
                part = fixed.evidence[key] = _compact(pattern_evidence(*key, fixed.codes))
            return _extend(part, cache.fixed_rows, inputs, cache.codes[:, -1])

        return extended

    def _over_block(
        self, block: list[tuple[str, Inputs, float]], listed: list[Pattern], codes: np.ndarray
    ) -> list[list[tuple[Pattern, float]]]:
        """:meth:`_over` of several terms of one release at once: per other release, the
        chosen log ratio of every (term, pattern) added to the sums, the very additions
        :func:`pattern_evidence` makes per term (a side that says nothing of a term adds
        0.0, which leaves its sums as they are)."""
        if not listed:
            return [[] for _ in block]
        sides = codes.shape[1]
        values = np.zeros((len(block), sides, 3), dtype=np.float64)
        for t, (_, (n_s, n, ranges), _) in enumerate(block):
            for i, side in enumerate(ranges):
                if side is not None:
                    values[t, i] = side_options(n_s, n, side)
        shape = (len(block), len(listed))
        certain_for = np.zeros(shape, dtype=np.int64)
        certain_against = np.zeros(shape, dtype=np.int64)
        total = np.zeros(shape, dtype=np.float64)
        for i in range(sides):
            column = values[:, i, :]
            chosen = column[:, codes[:, i]]
            if np.isfinite(column).all():
                # Nothing certain nor impossible: the where below would return chosen.
                total = total + chosen
                continue
            certain_for += chosen == math.inf
            certain_against += chosen == -math.inf
            total = total + np.where(np.isfinite(chosen), chosen, 0.0)
        return [
            self._over(
                inputs,
                rate,
                listed,
                partial(PatternEvidence, certain_for[t], certain_against[t], total[t]),
            )
            for t, (_, inputs, rate) in enumerate(block)
        ]

    def _over(
        self,
        inputs: Inputs,
        rate: float,
        listed: list[Pattern],
        evidence_of: Callable[[], PatternEvidence],
        limit: float | None = None,
    ) -> list[tuple[Pattern, float]]:
        """The patterns whose serial risk for the term exceeds the limit (``limit``, else the
        composition's), with that risk."""
        n_s, n, _ = inputs
        alpha = min(n_s / n, 1.0)
        if alpha <= 0.0 or not listed:
            return []
        bound = self.limit if limit is None else limit
        evidence = evidence_of()
        over: list[tuple[Pattern, float]] = []
        for p in _candidates(evidence, alpha, bound * rate):
            risk = serial_risk(evidence.at(p).posterior(alpha), rate)
            if risk > bound:
                over.append((listed[p], risk))
        return over


def _below_line(start: float, inputs: Inputs, bound: float) -> bool:
    """Whether a pattern's log-odds stay at or below :func:`_candidates`' line for ``bound``
    however it reads each side of ``inputs``: ``start`` (a sum already made) plus, side after
    side in order, the largest of the side's options (+0.0 where not finite), as the sums
    add them (:func:`_top`). ``False`` when a side may be certain evidence for s, or α is 1;
    ``True`` when α is 0."""
    n_s, n, _ = inputs
    alpha = min(n_s / n, 1.0)
    if alpha <= 0.0:
        return True
    if alpha >= 1.0 or bound <= 0.0:
        return False
    top = _top(inputs, start)
    if top is None:
        return False
    b = min(bound * (1 - _MARGIN), 1 - _MARGIN)
    line = math.log(b) - math.log1p(-b)
    return not math.log(alpha) - math.log1p(-alpha) + top > line


def _ratio_keys(inputs: Inputs) -> list[RatioKey]:
    n_s, n, ranges = inputs
    return [(n_s, n, *side, z) for side in ranges if side is not None for z in (0, 1)]


def _top(inputs: Inputs, start: float = 0.0) -> float | None:
    """The largest sum a pattern can make of ``inputs``' sides after ``start``: per side in
    order, the largest of its options (+0.0 where not finite), or ``None`` when a side may
    be certain evidence for s. Rounding is monotone, so adding values each at least a
    pattern's, in the same order, gives a sum at least the pattern's."""
    n_s, n, ranges = inputs
    top = start
    for side in ranges:
        if side is None:
            continue
        options = side_options(n_s, n, side)
        if math.inf in options:
            return None
        top = top + max(v if math.isfinite(v) else 0.0 for v in options)
    return top


def _peak(evidence: PatternEvidence) -> tuple[float, bool]:
    """The highest sum among patterns without certain evidence against s (``-inf`` when there
    is none), and whether one of them holds certain evidence for s."""
    possible = evidence.certain_against == 0
    if not possible.any():
        return -math.inf, False
    return float(evidence.total[possible].max()), bool((evidence.certain_for[possible] > 0).any())


def _compact(evidence: PatternEvidence) -> PatternEvidence:
    """Evidence kept for a whole publication in less memory: counts of certain evidence are at
    most the number of releases."""
    return PatternEvidence(
        evidence.certain_for.astype(np.int32),
        evidence.certain_against.astype(np.int32),
        evidence.total,
    )


def _extend(
    part: PatternEvidence, rows: np.ndarray, inputs: Inputs, last: np.ndarray
) -> PatternEvidence:
    """The evidence of patterns whose fixed pattern's evidence is ``part`` (at ``rows``) and
    whose code against ``j`` is ``last``, ``inputs`` holding ``j``'s side alone: the fixed
    sums, then ``j``'s log ratio added last, as :func:`pattern_evidence` adds it."""
    certain_for = part.certain_for[rows].astype(np.int64)
    certain_against = part.certain_against[rows].astype(np.int64)
    total = part.total[rows]
    n_s, n, (side,) = inputs
    if side is not None:
        options = side_options(n_s, n, side)
        chosen = np.array(options)[last]
        if all(math.isfinite(v) for v in options):
            # Nothing certain nor impossible: the where below would return chosen.
            total = total + chosen
        else:
            certain_for += chosen == math.inf
            certain_against += chosen == -math.inf
            total = total + np.where(np.isfinite(chosen), chosen, 0.0)
    return PatternEvidence(certain_for, certain_against, total)


def _candidates(evidence: PatternEvidence, alpha: float, bound: float) -> list[int]:
    """Patterns whose posterior may exceed ``bound`` (``limit × rate``), with a margin.

    Certain evidence against s gives 0 and certain evidence for s gives 1 (design.md §4 decisions);
    otherwise β = expit(logit(α) + total) (formula 12), which is above ``bound`` only when
    its log-odds are above ``logit(bound)``.
    """
    possible = evidence.certain_against == 0
    if alpha >= 1.0 or bound <= 0.0:
        return np.flatnonzero(possible).tolist() if alpha < 1.0 else list(range(len(possible)))
    certain = possible & (evidence.certain_for > 0)
    # β > b  <=>  logit(β) > logit(b), with b a little below the bound (and below 1, which
    # only β rounded to 1 can reach).
    b = min(bound * (1 - _MARGIN), 1 - _MARGIN)
    line = math.log(b) - math.log1p(-b)
    logit = math.log(alpha) - math.log1p(-alpha) + evidence.total
    chosen = certain | (possible & (logit > line))
    return np.flatnonzero(chosen).tolist()

"""The fixed part's scalar bound never rules out a term its patterns could raise.

:meth:`GlobalComposition._ruled_out` first tries a bound made of scalars alone: per fixed side,
in release order, the largest of its log ratios. A pattern's formula-12 sum adds one of those
options per side, in the same order, so the bound must be at least every pattern's sum (among
patterns without certain evidence against s), and must say "may be certain" whenever a
pattern holds certain evidence for s. Checked here against the per-pattern sums of
:func:`pattern_evidence` over every pattern of random sides, which are first checked against
formula 12 written out per pattern (finite ratios added in release order).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.risk.composition import _top
from app.core.risk.pattern_evidence import inputs_of, pattern_evidence, side_options


@st.composite
def _term_inputs(draw: st.DrawFn) -> tuple:
    """A term held ``n_s`` times in a release of ``n`` rows, against 1-4 other releases."""
    n = draw(st.integers(2, 30))
    n_s = draw(st.integers(1, n))
    sides = []
    for _ in range(draw(st.integers(1, 4))):
        other_n = draw(st.integers(1, 30))
        other_s = draw(st.integers(0, other_n))
        o = draw(st.integers(0, min(n, other_n)))
        sides.append((Counter({"s": other_s}), other_n, o))
    return inputs_of("s", n_s, n, sides)


@settings(max_examples=300, deadline=None)
@given(_term_inputs())
def test_the_bound_is_at_least_every_patterns_sum(inputs: tuple) -> None:
    n_s, n, ranges = inputs
    top = _top(inputs)
    maybe_certain = top is None
    codes = np.array(list(itertools.product(range(3), repeat=len(ranges))), dtype=np.int8)
    evidence = pattern_evidence(n_s, n, ranges, codes)
    for p, pattern in enumerate(codes.tolist()):
        # Formula 12's sum for this pattern, written out: finite ratios added in release
        # order, certain evidence counted apart.
        total, certain_for, certain_against = 0.0, 0, 0
        for side, code in zip(ranges, pattern, strict=True):
            if side is None:
                continue
            value = side_options(n_s, n, side)[code]
            if value == math.inf:
                certain_for += 1
            elif value == -math.inf:
                certain_against += 1
            elif math.isfinite(value):
                total = total + value
        assert (int(evidence.certain_for[p]), int(evidence.certain_against[p])) == (
            certain_for,
            certain_against,
        )
        assert float(evidence.total[p]) == total
        if certain_against:
            continue
        if certain_for:
            assert maybe_certain
        elif top is not None:
            assert total <= top

"""The next-term distribution of counterfeit walks, against the formula written per term.

:meth:`CounterfeitFactory._distribution` counts co-occurrence in numpy for speed;
a counterfeit's terms come from ``random.choices`` over its cumulative weights, so the same
seed gives the same counterfeits only if every candidate, its order and every weight are the
same floats as the formula evaluated term by term. The oracle here counts co-occurrence from
the rows themselves and shares no code with the factory.
"""

from __future__ import annotations

import itertools
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.perturbation.counterfeit import CounterfeitFactory
from app.core.risk.state import ClusterState, ReleaseState, SeriesState

_EPSILON = 0.05
_SHARP = 3.0
_ALPHABET = "abcdefgh"


def _oracle(
    rows: list[tuple[str, ...]],
    pool: Counter[str],
    exclude: set[str],
    basis: list[str],
    outside: float,
    smooth: bool,
) -> tuple[list[str], list[float]]:
    """Candidates and cumulative weights of ``w(t) · (ε + Σ_x co(t, x))^3 · ((ε + h(t))/k)²``
    (the factory's docstring): pool terms but ``exclude`` in sorted order, then the terms
    outside the pool that meet ``basis``; without ``smooth`` only terms meeting one."""

    def co(t: str, x: str) -> int:
        return sum(1 for row in rows if t in row and x in row) if t != x else 0

    met = {t for row in rows for t in row if any(co(t, x) for x in basis)}
    candidates = [t for t in sorted(pool) if t not in exclude]
    if outside:
        candidates += sorted(t for t in met if t not in pool and t not in exclude)
    weights: list[float] = []
    chosen: list[str] = []
    for t in candidates:
        total = sum(co(t, x) for x in basis)
        hits = sum(1 for x in basis if co(t, x))
        if not smooth and not hits:
            continue
        w = 1.0 if t in pool else outside
        chosen.append(t)
        weights.append(w * (_EPSILON + total) ** _SHARP * ((_EPSILON + hits) / len(basis)) ** 2)
    return chosen, list(itertools.accumulate(weights))


_rows = st.lists(
    st.lists(st.sampled_from(_ALPHABET), min_size=1, max_size=4).map(
        lambda terms: tuple(sorted(set(terms)))
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=150, deadline=None)
@given(
    old=_rows,
    new=_rows,
    pool_terms=st.lists(st.sampled_from([*_ALPHABET, "new1", "new2"]), min_size=1, max_size=8),
    exclude=st.sets(st.sampled_from(_ALPHABET), max_size=3),
    basis=st.lists(st.sampled_from([*_ALPHABET, "new1"]), min_size=1, max_size=4, unique=True),
    outside=st.sampled_from([0.0, 0.25]),
    smooth=st.booleans(),
)
def test_the_distribution_is_the_formula_term_by_term(
    old: list[tuple[str, ...]],
    new: list[tuple[str, ...]],
    pool_terms: list[str],
    exclude: set[str],
    basis: list[str],
    outside: float,
    smooth: bool,
) -> None:
    state = SeriesState(
        [
            ReleaseState(
                1, [ClusterState("c1", old, Counter(), {}, n_true=len(old))], Counter(), {}
            ),
            ReleaseState(
                2, [ClusterState("c1", new, Counter(), {}, n_true=len(new))], Counter(), {}
            ),
        ]
    )
    factory = CounterfeitFactory(state, 1, Counter(pool_terms), seed=1, twins=False)
    pool = Counter(pool_terms)
    exclude = exclude | set(basis)  # as the walks call it: the chosen terms are excluded
    # Co-occurrence is counted on the new release's true rows and every earlier row.
    expected = _oracle(old + new, pool, exclude, basis, outside, smooth)
    assert factory._distribution(pool, exclude, basis, outside, smooth) == expected
    # A second pool object with the same terms gets its own view, and the same answer.
    again = Counter(pool_terms)
    assert factory._distribution(again, exclude, basis, outside, smooth) == expected

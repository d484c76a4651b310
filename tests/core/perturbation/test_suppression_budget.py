"""The suppression budget (design.md §5.5; docs/lab/sanony.md, "Suppression budget")."""

from __future__ import annotations

from collections import Counter

import pytest

from app.core.perturbation.suppression import Suppressor
from app.core.risk.state import ClusterState, ReleaseState, SeriesState


def _release(copies: int) -> SeriesState:
    """One release of ``copies`` private copies of s in its global bag."""
    cluster = ClusterState("c1", [("a",)] * 10, Counter(), {}, n_true=10)
    return SeriesState([ReleaseState(1, [cluster], Counter({"s": copies}), {})])


@pytest.mark.parametrize(
    ("copies", "earlier", "floor", "expected"),
    [
        (500, (0, 0), 0, 5),  # the release's own 1%
        (500, (1500, 0), 0, 20),  # 1% of 2,000 copies, none used before
        (500, (1500, 12), 0, 8),  # less what earlier releases suppressed
        (500, (1500, 18), 0, 5),  # never below the release's own share
        (90, (0, 0), 3, 3),  # the floor for a small release
        (2, (0, 0), 3, 2),  # never more than the release holds
    ],
)
def test_the_budget_is_the_larger_of_the_release_and_the_series_share(
    copies: int, earlier: tuple[int, int], floor: int, expected: int
) -> None:
    assert Suppressor(_release(copies), 0, 0.01, floor, earlier).budget == expected

"""The lower bound on suppression (``benchmarks.experiments.suppression_bound``): its
likelihoods are the paper's (Example 9), and on a release that the global composition alone
puts over r_th it asks exactly what the publisher suppresses, judged by the project's oracle."""

from __future__ import annotations

import math

from app.core.history import SeriesHistory
from app.core.params import parse_params
from app.core.pipeline import publish
from benchmarks.experiments.suppression_bound import Bound, _ratio
from tests.core.series_strategies import rising_term_series


def test_likelihood_ratios_are_formulas_13_and_14() -> None:
    assert _ratio(1, 2, 1, 0, 0, 0) == math.inf  # Example 9: Laura must hold HIV
    assert _ratio(1, 2, 1, 0, 1, 0) == 0.0  # Example 9, cancer: no evidence
    # One copy of s in 4 rows, an overlap of 2 holding none: outside rows 1/2 against 1/4.
    assert math.isclose(_ratio(1, 4, 2, 0, 0, 0), math.log(3))


def test_the_bound_asks_what_the_publisher_suppresses_for_a_rising_term() -> None:
    corpora, private = rising_term_series()
    params = parse_params(
        "sanony", {"r_th": 2.0, "cluster_size": 4, "seed": 1, "guarantee": "paper"}
    )
    history = SeriesHistory()
    first = publish("sanony", history, corpora[0], private, params)
    history.releases.append(first.release)
    history.ledgers.append(first.ledger)
    bound = Bound(history.releases, corpora[1], private)
    assert bound.least("X", 0, 2.0) == 1
    assert bound.least("HIV", 0, 2.0) == 0
    second = publish("sanony", history, corpora[1], private, params)
    assert second.ledger.suppressed == {"X": 1}

"""Counts and supports with their intervals, on a hand-made release."""

from __future__ import annotations

import math

import pytest

from app.analysis.estimates import (
    counterfeit_bound,
    itemset_support,
    prevalence_table,
    supports_table,
    suppression_bound,
    term_count,
)
from app.analysis.reader import parse_release
from tests.analysis.sample import release_doc


def test_counterfeits_are_the_release_total_when_published() -> None:
    assert counterfeit_bound(parse_release(release_doc())) == (1, False)
    assert counterfeit_bound(parse_release(release_doc(counterfeit_rows=3))) == (3, True)
    with_bag = release_doc(counterfeit_rows=3, global_counterfeits=2)
    assert counterfeit_bound(parse_release(with_bag)) == (5, True)
    # counterfeit_counts "paper": the total is null, the clusters' counts are a floor only.
    paper = release_doc(counterfeit_rows=None, params={"counterfeit_counts": "paper"})
    assert counterfeit_bound(parse_release(paper)) == (1, False)


def test_the_suppression_bound() -> None:
    release = parse_release(release_doc())
    assert suppression_bound(release) == 3  # the floor: 1% of 6 copies is none
    escalated = parse_release({**release_doc(), "suppression_beyond_budget": True})
    assert suppression_bound(escalated) == math.inf  # issue 20: beyond the budget
    many = parse_release(release_doc(params={"max_suppression": 0.5, "suppression_floor": 0}))
    assert suppression_bound(many) == 6  # supp <= 0.5 (6 + supp)
    # series scope needs the earlier releases' copies; release scope does not
    later = parse_release(release_doc(2))
    assert math.isinf(suppression_bound(later))
    scoped = release_doc(2, params={"suppression_scope": "release", "suppression_floor": 0})
    assert suppression_bound(parse_release(scoped)) == 0


def test_a_term_count_and_its_interval() -> None:
    estimate = term_count(parse_release(release_doc(counterfeit_rows=1)), "HIV")
    assert (estimate.expected, estimate.low, estimate.high) == (5, 4, 8)
    assert estimate.counterfeits_complete
    assert estimate.contains(4) and estimate.contains(8) and not estimate.contains(9)
    assert term_count(parse_release(release_doc()), "nothing").expected == 0


def test_a_public_itemset_is_read_off_the_rows() -> None:
    estimate = itemset_support(parse_release(release_doc()), ["a", "b"])
    assert (estimate.expected, estimate.low, estimate.high, estimate.sd) == (2, 1, 2, 0)


def test_a_pair_with_a_private_term_follows_the_hypergeometric_law() -> None:
    release = parse_release(release_doc())
    estimate = itemset_support(release, ["a"], "HIV")
    # c1: 3 of 4 rows hold a, 3 copies; c2: 1 of 2 rows, 1 copy
    assert estimate.expected == pytest.approx(3 * 3 / 4 + 1 * 1 / 2)
    variance = 3 * 0.75 * 0.25 * 1 / 3 + 1 * 0.5 * 0.5 * 1 / 1
    assert estimate.sd == pytest.approx(math.sqrt(variance))
    assert estimate.low == pytest.approx(max(0, 2.75 - 1.96 * math.sqrt(variance) - 1))
    assert estimate.high == 4  # clipped: 4 rows hold a


def test_the_supports_table() -> None:
    table = supports_table([parse_release(release_doc())], min_support=2, pairs="all")
    kinds = dict(zip(table["itemset"], table["kind"], strict=True))
    assert kinds["HIV"] == "private" and kinds["flu"] == "private"  # every private term
    assert kinds["a"] == "public" and kinds["a HIV"] == "public+private"
    assert kinds["a b"] == "public+public"
    assert "a flu" not in kinds  # expected 0.5 < 2
    with pytest.raises(ValueError):
        supports_table([], pairs="some")


def test_the_table_s_pairs_equal_itemset_support_one_by_one() -> None:
    release = parse_release(release_doc())
    table = supports_table([release], min_support=0.01, pairs="private")
    pairs = table[table.kind == "public+private"]
    assert len(pairs) == 6  # a, b, c x HIV, flu, all with expected > 0.06
    for line in pairs.itertuples():
        t, s = str(line.itemset).split()
        one = itemset_support(release, [t], s)
        assert (line.expected, line.sd, line.low, line.high) == pytest.approx(
            (one.expected, one.sd, one.low, one.high), abs=1e-4
        )


def test_the_prevalence_table() -> None:
    release = parse_release(release_doc(counterfeit_rows=1))
    table = prevalence_table([release], ["HIV"])
    line = table.iloc[0]
    assert (line["count"], line["count_low"], line["count_high"]) == (5, 4, 8)
    assert line["prevalence"] == pytest.approx(5 / 6)
    assert line["prevalence_low"] == pytest.approx(4 / 6)
    assert line["prevalence_high"] == 1.0  # 8 / 5 records, clipped

"""Counts and supports with their intervals, on a hand-made release."""

from __future__ import annotations

import math
from itertools import combinations, product

import pytest

from app.analysis.estimates import (
    counterfeit_bound,
    itemset_support,
    prevalence_table,
    supports_table,
    suppression_bound,
    term_count,
)
from app.analysis.reader import Release, parse_release
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
    assert suppression_bound(escalated) == math.inf  # escalated: beyond the budget
    many = parse_release(release_doc(params={"max_suppression": 0.5, "suppression_floor": 0}))
    assert suppression_bound(many) == 6  # supp <= 0.5 (6 + supp)
    # series scope needs the earlier releases' copies; release scope does not
    later = parse_release(release_doc(2))
    assert math.isinf(suppression_bound(later))
    scoped = release_doc(2, params={"suppression_scope": "release", "suppression_floor": 0})
    assert suppression_bound(parse_release(scoped)) == 0
    # a release that promises true rows publishes no budget its suppression kept to
    assert math.isinf(suppression_bound(parse_release(release_doc(guarantee="true_rows"))))


def test_a_term_count_and_its_interval() -> None:
    estimate = term_count(parse_release(release_doc(counterfeit_rows=1)), "HIV")
    # 5 copies, 1 counterfeit row below; above, the suppression floor (3) but only 5 records
    assert (estimate.expected, estimate.low, estimate.high) == (5, 4, 5)
    assert estimate.counterfeits_complete and estimate.guarantee == "paper"
    assert estimate.contains(4) and estimate.contains(5) and not estimate.contains(6)
    assert term_count(parse_release(release_doc()), "nothing").expected == 0


def test_under_true_rows_a_count_is_a_floor() -> None:
    release = parse_release(release_doc(counterfeit_rows=0, guarantee="true_rows"))
    estimate = term_count(release, "HIV")
    assert (estimate.low, estimate.high, estimate.high_if_unsuppressed) == (5, 6, 5)
    assert math.isinf(estimate.suppression) and estimate.guarantee == "true_rows"


def test_a_public_itemset_is_read_off_the_rows() -> None:
    estimate = itemset_support(parse_release(release_doc()), ["a", "b"])
    assert (estimate.expected, estimate.low, estimate.high, estimate.sd) == (2, 1, 2, 0)


def _placements(release: Release, term: str) -> list[list[set[int]]]:
    """Every outcome of a random reconstruction of ``term`` (equally likely): the rows,
    numbered through the release, that receive it."""
    starts = [0]
    for cluster in release.clusters:
        starts.append(starts[-1] + cluster.size)
    per_cluster = [
        [set(rows) for rows in combinations(range(a, b), c.n_s(term))]
        for c, a, b in zip(release.clusters, starts, starts[1:], strict=False)
    ]
    outcomes = []
    for chosen in product(*per_cluster):
        held = set().union(*chosen)
        free = sorted(set(range(release.n_rows)) - held)
        left = min(release.unplaced_copies(term), len(free))
        outcomes.extend([held | set(extra)] for extra in combinations(free, left))
    return outcomes


def test_a_pair_s_moments_are_the_reconstruction_s_exactly() -> None:
    release = parse_release(release_doc())
    # c1: 3 of 4 rows hold a, N(HIV) 3; c2: 1 of 2 rows, 1 copy; the bag's 2 copies less
    # the share of 1 leave 1 copy for any row without HIV
    assert release.unplaced_copies("HIV") == 1
    holds_a = [i for i, row in enumerate(r for c in release.clusters for r in c.rows) if "a" in row]
    supports = [len(rows[0] & set(holds_a)) for rows in _placements(release, "HIV")]
    mean = sum(supports) / len(supports)
    variance = sum((x - mean) ** 2 for x in supports) / len(supports)
    estimate = itemset_support(release, ["a"], "HIV")
    assert estimate.expected == pytest.approx(mean)
    assert estimate.sd == pytest.approx(math.sqrt(variance))


def test_a_pair_s_interval_is_the_release_s_bound() -> None:
    release = parse_release(release_doc(counterfeit_rows=1))
    estimate = itemset_support(release, ["a"], "HIV")
    # 5 copies and 4 rows with a among 6 rows: at least 3 together, less 1 counterfeit row;
    # at most the 4 rows with a
    assert (estimate.low, estimate.high, estimate.high_if_unsuppressed) == (2, 4, 4)


def _bag_heavy(**extra: object) -> dict[str, object]:
    """Two clusters of 5 rows; x on the rows of c1; 5 copies of s, all in the bag (a bag
    of 5 over 10 rows rounds to a share of 0 in clusters of 5: formula 3)."""
    doc = release_doc(**extra)
    doc["clusters"] = [
        {"cluster_id": "c1", "rows": [["x"]] * 5, "private_terms": {}, "counterfeits": 0},
        {"cluster_id": "c2", "rows": [["y"]] * 5, "private_terms": {}, "counterfeits": 0},
    ]
    doc.update(n_rows=10, global_bag={"s": 5}, population_rates={"s": 0.5})
    return doc


def test_the_bag_s_copies_count_where_the_raw_data_put_them() -> None:
    # The raw data behind it may hold s on every row with x: support 5. Definition 4 alone
    # places no copy (no share), so an interval around 0 misses it.
    release = parse_release(_bag_heavy(counterfeit_rows=0))
    estimate = itemset_support(release, ["x"], "s")
    assert estimate.contains(5) and estimate.contains(0)
    assert estimate.expected == pytest.approx(2.5)  # the bag spread over the 10 rows


def test_a_cluster_s_copies_may_be_rows_of_another() -> None:
    # Refining (design.md §2.4) gives a bag copy to any cluster with room: c1's copy of s
    # may be a row of c2's, so the raw data may hold no x with s at all.
    doc = _bag_heavy(counterfeit_rows=0)
    doc["clusters"][0]["private_terms"] = {"s": 1}
    doc["clusters"][1]["private_terms"] = {"s": 1}
    doc["global_bag"] = {}
    release = parse_release(doc)
    assert itemset_support(release, ["x"], "s").contains(0)


def test_the_supports_table() -> None:
    table = supports_table([parse_release(release_doc())], min_support=2, pairs="all")
    kinds = dict(zip(table["items"], table["kind"], strict=True))
    assert kinds[("HIV",)] == "private" and kinds[("flu",)] == "private"  # every private term
    assert kinds[("a",)] == "public" and kinds[("a", "HIV")] == "public+private"
    assert kinds[("a", "b")] == "public+public"
    assert ("a", "flu") not in kinds  # expected 4/6 < 2
    with pytest.raises(ValueError):
        supports_table([], pairs="some")


def test_a_share_of_the_records_is_a_share_without_the_counterfeit_rows() -> None:
    # 6 rows, 1 counterfeit: 5 records; c is on 3 rows, 3/5 = 0.6 of the records (0.5 of
    # the rows), so a threshold of 0.6 keeps it
    release = parse_release(release_doc(counterfeit_rows=1))
    assert release.records == 5
    table = supports_table([release], min_support=0.6, pairs="none")
    assert ("c",) in set(table["items"])


def test_the_table_s_pairs_equal_itemset_support_one_by_one() -> None:
    release = parse_release(release_doc())
    table = supports_table([release], min_support=0.01, pairs="private")
    pairs = table[table.kind == "public+private"]
    assert len(pairs) == 6  # a, b, c x HIV, flu, all with expected > 0.06
    for line in pairs.itertuples():
        t, s = line.items
        one = itemset_support(release, [t], s)
        assert (line.expected, line.sd, line.low, line.high, line.high_if_unsuppressed) == (
            pytest.approx(
                (one.expected, one.sd, one.low, one.high, one.high_if_unsuppressed), abs=1e-4
            )
        )


def test_the_prevalence_divides_by_the_records() -> None:
    release = parse_release(release_doc(counterfeit_rows=1))
    table = prevalence_table([release], ["HIV"])
    line = table.iloc[0]
    assert (line["count"], line["count_low"], line["count_high"]) == (5, 4, 5)
    assert line["prevalence"] == pytest.approx(5 / 5)  # 5 copies, 5 records
    assert line["prevalence_low"] == pytest.approx(4 / 5)
    assert line["prevalence_high"] == 1.0

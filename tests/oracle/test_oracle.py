"""Tests of the serial-risk oracle: the paper's worked example by hand, pieces, brute force.

Notation in the comments: ``C(n, k)`` binomial, ``n_s`` copies of s in the view, ``N`` rows of
the view, ``o`` rows of the overlap, ``[r1, r2]`` range of the overlap (formula 6), ``L1``/``L0``
formulas 13/14, ``beta`` formula 12, risk formula 15.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from fractions import Fraction as F
from itertools import combinations
from typing import cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.model import PublishedCluster, PublishedRelease, Row
from tests.oracle.serial_risk import (
    allowed_z,
    choose_pair,
    cluster_cover,
    cluster_views,
    comb,
    global_cover,
    judge_summary,
    likelihoods,
    max_risk,
    overlap_range,
    posterior,
    posteriors,
    release_view,
    row_risks,
    s_range,
    serial_risks,
    violations,
)

# --------------------------------------------------------------------------- worked example

LAURA: Row = ("arson", "fraud", "theft")  # T1
T2: Row = ("arson", "theft")
T3: Row = ("arson", "vandal")
T4: Row = ("abuse", "arson")
DUI: Row = ("DUI", "assault")  # T5, T6
T7: Row = ("arson", "murder", "theft")
T8: Row = ("abuse", "arson", "mansl")
COUNTERFEIT: Row = ("murder",)


def rates(**values: F) -> dict[str, float]:
    """Exact rates keep the example's literals exact; the oracle accepts any rational."""
    return cast(dict[str, float], values)


def cluster(cid: str, rows: Sequence[Row], counts: dict[str, int]) -> PublishedCluster:
    return PublishedCluster(cid, list(rows), dict(counts))


def release_1(population_rates: dict[str, float] | None = None) -> PublishedRelease:
    """Table 4a: N = 6; HIV 2, cancer 2, herpes 1 (global bag)."""
    return PublishedRelease(
        release_no=1,
        clusters=[
            cluster("c1", [LAURA, T2], {"HIV": 1, "cancer": 1}),
            cluster("c2", [T3, T4], {"cancer": 1}),
            cluster("c3", [DUI, DUI], {"HIV": 1}),
        ],
        global_bag={"herpes": 1},
        population_rates=population_rates or rates(HIV=F(1, 3), cancer=F(1, 3), herpes=F(1, 6)),
    )


def release_2() -> PublishedRelease:
    """Table 4b (Anony only): N = 5; cancer 2."""
    return PublishedRelease(
        release_no=2,
        clusters=[
            cluster("c1", [T2, T7], {"cancer": 1}),
            cluster("c2", [T3, T4, T8], {"cancer": 1}),
        ],
        global_bag={},
        population_rates=rates(cancer=F(2, 5)),
    )


def release_2_after_bp() -> PublishedRelease:
    """Release 2 after BP (Example 11): one counterfeit and one HIV copy in c1; N = 6."""
    return PublishedRelease(
        release_no=2,
        clusters=[
            cluster("c1", [T2, T7, COUNTERFEIT], {"cancer": 1, "HIV": 1}),
            cluster("c2", [T3, T4, T8], {"cancer": 1}),
        ],
        global_bag={},
        population_rates=rates(HIV=F(1, 6), cancer=F(2, 6)),
        global_counterfeits=0,
    )


LAURA_KEY = (0, "c1", 0)


def test_laura_hiv_risk_is_3() -> None:
    # No set of the example is held by two clusters of one release, and with two releases the
    # global composition's product over the other releases has one factor: Example 9/10 hold
    # unchanged under design.md §4's "no weaker adversary" rules.
    # Cluster: C1_1 = [LAURA, T2] (N=2, n_HIV=1, alpha=1/2); C1_2 = [T2, T7] (no HIV).
    # O = {T2}, o = 1. Formula 5 w.r.t. C1_1: f1 = max(1-(2-1),0) = 0, f2 = min(1,1) = 1;
    # w.r.t. C1_2: [0, 0]. So [r1, r2] = [0, 0]. LAURA is not in O: z = 0.
    # L1 = C(0,0)*C(1,1)/C(1,1) = 1 ; L0 = C(1,0)*C(0,1)/C(1,1) = 0  -> beta = 1 (Example 9).
    # Global: R1 (N=6, n_HIV=2) vs R2 (N=5, no HIV); O = {T2, T3, T4}, o = 3, [r1,r2] = [0,0].
    # L1 = C(1,0)*C(4,3)/C(5,3) = 4/10 ; L0 = C(2,0)*C(3,3)/C(5,3) = 1/10
    # beta = (1/3 * 4/10) / (1/3 * 4/10 + 2/3 * 1/10) = (4/30) / (6/30) = 2/3.
    # Risk = max(1, 2/3) / (1/3) = 3 (Example 10).
    releases = [release_1(), release_2()]
    assert posteriors(releases)[(*LAURA_KEY, "HIV")] == (F(1), F(2, 3))
    assert serial_risks(releases)[(*LAURA_KEY, "HIV")] == 3


def test_laura_cancer_risk_is_3_halves() -> None:
    # Cluster: n_cancer = 1 in both C1_1 and C1_2 (N=2 each), O = {T2}: both ranges [0, 1].
    # z = 0: L1 = C(0,0)C(1,1) + C(0,1)C(1,0) = 1 ; L0 = C(1,0)C(0,1) + C(1,1)C(0,0) = 1
    # (denominator C(1,1) = 1): beta = alpha = 1/2.
    # Global: R1 n=2, N=6, o=3: [0, 2]; R2 n=2, N=5: [max(2-2,0), 2] = [0, 2].
    # L1 = (C(1,0)C(4,3) + C(1,1)C(4,2) + C(1,2)C(4,1)) / C(5,3) = (4 + 6 + 0)/10 = 1
    # L0 = (C(2,0)C(3,3) + C(2,1)C(3,2) + C(2,2)C(3,1)) / 10 = (1 + 6 + 3)/10 = 1
    # beta_global = alpha = 2/6 = 1/3. Risk = max(1/2, 1/3) / (1/3) = 3/2.
    releases = [release_1(), release_2()]
    assert posteriors(releases)[(*LAURA_KEY, "cancer")] == (F(1, 2), F(1, 3))
    assert serial_risks(releases)[(*LAURA_KEY, "cancer")] == F(3, 2)


def test_laura_herpes_risk_is_2_through_global_composition() -> None:
    # Cluster: C1_1 holds no herpes (alpha = 0): beta = 0 ("it is 0 when only C1_1 and C1_2
    # are considered", Example 10).
    # Global: R1 n=1, N=6, o=3: [max(1-3,0), min(3,1)] = [0,1]; R2 no herpes: [0,0] -> [0,0].
    # L1 = C(0,0)*C(5,3)/C(5,3) = 1 ; L0 = C(1,0)*C(4,3)/C(5,3) = 4/10
    # beta = (1/6) / (1/6 + 5/6 * 4/10) = (1/6) / (3/6) = 1/3 (section 2.3.2).
    # Risk = (1/3) / (1/6) = 2.
    releases = [release_1(), release_2()]
    assert posteriors(releases)[(*LAURA_KEY, "herpes")] == (F(0), F(1, 3))
    assert serial_risks(releases)[(*LAURA_KEY, "herpes")] == 2


def test_laura_hiv_risk_after_bp_is_3_halves() -> None:
    # Cluster: C1_2 = [T2, T7, COUNTERFEIT], HIV 1, N = 3; O = {T2}, o = 1.
    # W.r.t. C1_1: [0, 1]; w.r.t. C1_2: [max(1-(3-1),0), min(1,1)] = [0, 1] -> [0, 1]. z = 0.
    # L1 = C(0,0)C(1,1) + C(0,1)C(1,0) = 1 ; L0 = C(1,0)C(0,1) + C(1,1)C(0,0) = 1 -> beta = 1/2.
    # Global: R2 now N = 6, HIV 1; O = {T2, T3, T4}; R1: [0, 2], R2: [0, min(3,1)] -> [0, 1].
    # L1 = (C(1,0)C(4,3) + C(1,1)C(4,2)) / C(5,3) = (4 + 6)/10 = 1
    # L0 = (C(2,0)C(3,3) + C(2,1)C(3,2)) / 10 = (1 + 6)/10 = 7/10
    # beta = (1/3) / (1/3 + 2/3 * 7/10) = (5/15) / (12/15) = 5/12.
    # Risk (R1's rate 1/3 unchanged) = max(1/2, 5/12) / (1/3) = 3/2.
    releases = [release_1(), release_2_after_bp()]
    assert posteriors(releases)[(*LAURA_KEY, "HIV")] == (F(1, 2), F(5, 12))
    assert serial_risks(releases)[(*LAURA_KEY, "HIV")] == F(3, 2)


def test_t8_cannot_have_cancer_in_its_cluster() -> None:
    # Example 8's direct part: C2_1 = [T3, T4] (cancer 1, N=2), C2_2 = [T3, T4, T8] (cancer 1).
    # O = {T3, T4}, o = 2. W.r.t. C2_2: [max(1-1,0), 1] = [0, 1]; w.r.t. C2_1: [1, 1] -> [1, 1].
    # T8 is outside O (z = 0): L1 = C(0,1)*C(2,1)/C(2,2) = 0 ; L0 = C(1,1)*C(1,1)/1 = 1: beta 0.
    # Global (R2 N=5, cancer 2 vs R1): [0,2]; z = 0:
    # L1 = (C(1,0)C(3,3) + C(1,1)C(3,2)) / C(4,3) = (1 + 3)/4 = 1
    # L0 = (C(2,0)C(2,3) + C(2,1)C(2,2) + C(2,2)C(2,1)) / 4 = (0 + 2 + 2)/4 = 1: beta = 2/5.
    # Risk = max(0, 2/5) / (2/5) = 1.
    releases = [release_1(), release_2()]
    assert posteriors(releases)[(1, "c2", 2, "cancer")] == (F(0), F(2, 5))
    assert serial_risks(releases)[(1, "c2", 2, "cancer")] == 1


def test_worked_example_violations_and_max_risk() -> None:
    # Only Laura's HIV exceeds r_th = 2 (the DUI rows reach exactly 2: HIV (2/3)/(1/3)).
    releases = [release_1(), release_2()]
    assert violations(releases, 2) == [(0, "c1", 0, "HIV", F(3))]
    assert serial_risks(releases)[(0, "c3", 1, "HIV")] == 2
    assert max_risk(releases) == 3
    # After BP nothing exceeds 2; the herpes risk of 2 (global composition) remains the max.
    after = [release_1(), release_2_after_bp()]
    assert violations(after, 2) == []
    assert max_risk(after) == 2


def test_judged_terms_have_copies_and_a_positive_rate() -> None:
    # Release 2 (Anony only) publishes only a cancer rate and has no HIV copy.
    risks = serial_risks([release_1(), release_2()])
    assert {s for (i, *_, s) in risks if i == 1} == {"cancer"}
    assert len(risks) == 6 * 3 + 5 * 1
    risks = serial_risks([release_1(), release_2_after_bp()])
    assert {s for (i, *_, s) in risks if i == 1} == {"cancer", "HIV"}


def test_float_rates_are_converted_exactly() -> None:
    float_rates = rates(HIV=1 / 3, cancer=1 / 3, herpes=1 / 6)  # type: ignore[arg-type]
    risks = serial_risks([release_1(float_rates), release_2()])
    assert risks[(*LAURA_KEY, "HIV")] == 1 / F(1 / 3)  # not exactly 3: 1/3 is not a float
    assert risks[(*LAURA_KEY, "herpes")] == F(1, 3) / F(1 / 6)
    assert abs(float(risks[(*LAURA_KEY, "HIV")]) - 3) < 1e-12


def test_violations_allow_an_absolute_tolerance_of_1e_9() -> None:
    releases = [release_1(), release_2()]  # Laura's HIV risk is exactly 3
    assert violations(releases, 3) == []
    assert violations(releases, 3 - F(1, 10**9)) == []  # risk = r_th + 1e-9: not over
    assert violations(releases, 3 - 1e-10) == []  # floating point noise
    over = [(0, "c1", 0, "HIV", F(3))]
    assert violations(releases, 3 - F(1, 10**9) - F(1, 10**30)) == over
    assert violations(releases, F(3) * (1 - F(1, 10**7))) == over


def test_violations_are_counted_per_published_row() -> None:
    # Laura's row exceeds r_th = 1 for HIV (3), herpes (2) and cancer (3/2): one violation,
    # with its worst term.
    releases = [release_1(), release_2()]
    found = violations(releases, 1)
    assert len(found) == len({(i, c, r) for i, c, r, _, _ in found})
    assert (0, "c1", 0, "HIV", F(3)) in found
    worst = row_risks(releases)
    assert worst[LAURA_KEY] == (F(3), "HIV")
    assert len(found) == sum(risk > 1 for risk, _ in worst.values())


def test_terms_with_copies_but_no_rate_are_not_judged() -> None:
    # HIV copies without a published HIV rate: no defined risk, the term is not judged.
    no_hiv_rate = release_1(rates(cancer=F(1, 3), herpes=F(1, 6)))
    risks = serial_risks([no_hiv_rate, release_2()])
    assert {s for (i, *_, s) in risks if i == 0} == {"cancer", "herpes"}
    zero_rate = release_1(rates(HIV=F(0), cancer=F(1, 3), herpes=F(1, 6)))
    assert serial_risks([zero_rate, release_2()]) == risks
    assert max_risk([zero_rate, release_2()]) == 2  # herpes: Laura's HIV risk 3 is gone


def test_judge_summary_per_release() -> None:
    # Release 1: 6 rows, max 3 (Laura's HIV); over r_th = 2: Laura's row only (the DUI rows
    # and the herpes risks reach exactly 2). Release 2: 5 rows, cancer risks at most
    # beta / (2/5) <= (1/2) / (2/5) = 5/4.
    releases = [release_1(), release_2()]
    summary = judge_summary(releases, 2)
    assert summary[1] == (6, F(3), 1)
    rows, worst, over = summary[2]
    assert (rows, over) == (5, 0)
    assert worst == max(r for (i, *_), r in serial_risks(releases).items() if i == 1)
    assert judge_summary(releases) == {1: (6, F(3), 0), 2: (5, worst, 0)}  # r_th 8
    assert judge_summary(releases, 1)[1][2] == len(
        [v for v in violations(releases, 1) if v[0] == 0]
    )


# --------------------------------------------------------------------------- no weaker adversary

A, B, C, D, E, G, X = (("a",), ("b",), ("c",), ("d",), ("e",), ("g",), ("x",))


def test_a_set_spread_over_several_clusters_links_every_pair() -> None:
    # Release 1: c1 = [X, A, B] with s 1 (alpha 1/3), c2 = [X, E]; release 2: d1 = [X, C],
    # d2 = [X, D], no s. X is held by two clusters of each release: the old linking rule
    # ignored it (every beta its prior; risk of A 5/3). Now c1 overlaps d1 and d2 on {X}.
    # Each overlap: o = 1; c1 range [max(1-(3-1),0), min(1,1)] = [0, 1]; d range [0,0] -> [0,0].
    # A (z = 0): L1 = C(0,0)C(2,1)/C(2,1) = 1 ; L0 = C(1,0)C(1,1)/C(2,1) = 1/2, for each.
    # beta_cluster = (1/3) / (1/3 + 2/3 * 1/2 * 1/2) = (1/3) / (1/2) = 2/3.
    # X (z = 1): L1 = C(0,-1)... = 0: beta 0.
    # Global: R1 = [X, A, B, X, E] (N 5, s 1) vs R2 = [X, C, X, D]: O = {X: 2}, o = 2;
    # R1 range [max(1-3,0), 1] = [0, 1], R2 [0, 0]. A (z = 0):
    # L1 = C(0,0)C(4,2)/C(4,2) = 1 ; L0 = C(1,0)C(3,2)/C(4,2) = 3/6 = 1/2
    # beta_global = (1/5) / (1/5 + 4/5 * 1/2) = 1/3. Risk (rate 1/5) = (2/3) / (1/5) = 10/3.
    releases = [
        PublishedRelease(
            1, [cluster("c1", [X, A, B], {"s": 1}), cluster("c2", [X, E], {})], {}, rates(s=F(1, 5))
        ),
        PublishedRelease(2, [cluster("d1", [X, C], {}), cluster("d2", [X, D], {})], {}, rates()),
    ]
    views = [cluster_views(r) for r in releases]
    assert [(dict(o), len(v.rows)) for o, v in cluster_cover(views, 0, 0)] == [({X: 1}, 2)] * 2
    assert len(cluster_cover(views, 1, 0)) == 2  # d1 overlaps c1 and c2 on {X}
    result = posteriors(releases)
    assert [result[0, "c1", i, "s"] for i in range(3)] == [
        (F(0), F(0)),
        (F(2, 3), F(1, 3)),
        (F(2, 3), F(1, 3)),
    ]
    assert serial_risks(releases)[0, "c1", 1, "s"] == F(10, 3)
    assert max_risk(releases) == F(10, 3)
    assert violations(releases, 3) == [(0, "c1", 1, "s", F(10, 3)), (0, "c1", 2, "s", F(10, 3))]


def test_a_set_spread_within_one_release_links_to_each_cluster_of_the_other() -> None:
    # Release 1 holds X in c1 and c2; release 2 holds X once, in a single cluster d1 (with s).
    # Both c1 and c2 overlap d1 on {X} (the old rule blocked X: spread in release 1).
    # c1 = [X, A] s 1: range w.r.t. c1 [0, 1]; d1 = [X, C] s 1: [0, 1] -> [0, 1], o = 1.
    # A (z = 0): L1 = (C(0,0)C(1,1) + C(0,1)C(1,0))/C(1,1) = 1 ; L0 = C(1,0)C(0,1) + C(1,1)C(0,0)
    # = 1: uninformative, beta = 1/2. c2 = [X, B] without s: alpha 0.
    # d1's X row (z = 1): overlaps with c1 (range [0,1]) and c2 (c2 range [0,0] -> [0,0]):
    # c1: L1 = (C(0,-1)C(1,1) + C(0,0)C(1,0))/C(1,0) = 1 ; L0 = C(1,0)C(0,0) + C(1,1)C(0,-1) = 1
    # c2: L1 = C(0,-1)... = 0 ; L0 = C(1,0)C(0,0)/C(1,0) = 1: beta 0. C (z = 0 for both):
    # c1: L1 = C(0,0)C(1,1) + C(0,1)C(1,0) = 1 ; L0 = C(1,0)C(0,1) + C(1,1)C(0,0) = 1
    # c2: L1 = C(0,0)C(1,1)/C(1,1) = 1 ; L0 = C(1,0)C(0,1) = 0: beta 1 (C must hold s).
    releases = [
        PublishedRelease(
            1, [cluster("c1", [X, A], {"s": 1}), cluster("c2", [X, B], {})], {}, rates(s=F(1, 4))
        ),
        PublishedRelease(2, [cluster("d1", [X, C], {"s": 1})], {}, rates(s=F(1, 2))),
    ]
    result = posteriors(releases)
    assert result[0, "c1", 1, "s"][0] == F(1, 2)
    assert [result[1, "d1", i, "s"][0] for i in range(2)] == [0, 1]


def test_global_composition_multiplies_over_all_other_releases() -> None:
    # Release 1: c1 = [A, B], c2 = [C, D], no copy in the clusters, herpes-like s 1 in the bag:
    # beta_cluster = 0; the whole release has N = 4, s 1, alpha 1/4, rate 1/4.
    # Release 2 = [A, E], release 3 = [A, B, G], no s.
    # R1 vs R2: O = {A}, o = 1: R1 range [max(1-3,0), 1] = [0, 1]; R2 [0, 0] -> [0, 0].
    #   C (z = 0): L1 = C(0,0)C(3,1)/C(3,1) = 1 ; L0 = C(1,0)C(2,1)/C(3,1) = 2/3.
    # R1 vs R3: O = {A, B}, o = 2: R1 range [max(1-2,0), 1] = [0, 1]; R3 [0, 0] -> [0, 0].
    #   C (z = 0): L1 = C(0,0)C(3,2)/C(3,2) = 1 ; L0 = C(1,0)C(2,2)/C(3,2) = 1/3.
    # Formula 12 over both: (1/4) / (1/4 + 3/4 * 2/3 * 1/3) = (1/4) / (1/4 + 1/6) = 3/5.
    # (Each alone: 1/3 and 1/2; the old per-release maximum said 1/2, risk 2.)
    # Risk of C and D = (3/5) / (1/4) = 12/5. A (in both overlaps, z = 1): L1 = C(0,-1).. = 0,
    # beta 0; B (in the R3 overlap, z = 1): 0.
    releases = [
        PublishedRelease(
            1, [cluster("c1", [A, B], {}), cluster("c2", [C, D], {})], {"s": 1}, rates(s=F(1, 4))
        ),
        PublishedRelease(2, [cluster("c1", [A, E], {})], {}, rates()),
        PublishedRelease(3, [cluster("c1", [A, B, G], {})], {}, rates()),
    ]
    wholes = [release_view(r) for r in releases]
    assert [dict(o) for o, _ in global_cover(wholes, 0)] == [{A: 1}, {A: 1, B: 1}]
    result = posteriors(releases)
    assert result[0, "c2", 0, "s"] == result[0, "c2", 1, "s"] == (F(0), F(3, 5))
    assert result[0, "c1", 0, "s"] == result[0, "c1", 1, "s"] == (F(0), F(0))
    assert serial_risks(releases)[0, "c2", 0, "s"] == F(12, 5)
    assert max_risk(releases) == F(12, 5)
    assert judge_summary(releases, 2) == {1: (4, F(12, 5), 2), 2: (2, F(0), 0), 3: (3, F(0), 0)}
    # With release 3 alone the product has one factor: beta = 1/2.
    assert posteriors([releases[0], releases[2]])[0, "c2", 0, "s"] == (F(0), F(1, 2))


# --------------------------------------------------------------------------- pieces


def test_comb_is_zero_outside_its_domain() -> None:
    assert comb(5, 2) == 10
    assert comb(0, 0) == 1
    assert comb(-1, 0) == comb(-1, -1) == comb(3, -1) == comb(3, 4) == 0


def test_ranges_of_example_6_and_7() -> None:
    # Example 6: HIV in O = {T2}: w.r.t. C1_1 (N=2, n=1) [0, 1]; w.r.t. C1_2 (n=0) [0, 0].
    assert s_range(1, 2, 1) == (0, 1)
    assert s_range(0, 2, 1) == (0, 0)
    assert overlap_range((0, 1), (0, 0)) == (0, 0)
    # Example 7: cancer in O = {T3, T4}: C2_1 (N=2, n=1): f1 = max(1-0,0) = 1 -> [1, 1];
    # C2_2 (N=3, n=1): f1 = max(1-1, 0) = 0 -> [0, 1]; range [1, 1].
    assert s_range(1, 2, 2) == (1, 1)
    assert s_range(1, 3, 2) == (0, 1)
    assert overlap_range((1, 1), (0, 1)) == (1, 1)
    # Proposition 1's substitution example: {A} with s1 vs {A} without: [1,1] and [0,0].
    assert overlap_range(s_range(1, 1, 1), s_range(0, 1, 1)) is None


def test_empty_range_leaves_the_prior() -> None:
    # C* = [a, b, c] with 2 copies of s, C'* = [a, b] without s. O = {a, b}, o = 2.
    # W.r.t. C*: [max(2-(3-2),0), min(2,2)] = [1, 2]; w.r.t. C'*: [0, 0]. Empty: skipped,
    # so every row keeps alpha = 2/3 (cluster and global alike: one cluster per release).
    abc = [("a",), ("b",), ("c",)]
    first = PublishedRelease(1, [cluster("c1", abc, {"s": 2})], {}, rates(s=F(2, 3)))
    second = PublishedRelease(2, [cluster("c1", abc[:2], {})], {}, rates())
    result = posteriors([first, second])
    assert [result[0, "c1", i, "s"] for i in range(3)] == [(F(2, 3), F(2, 3))] * 3
    assert max_risk([first, second]) == 1


def test_likelihoods_of_example_9() -> None:
    # HIV for Laura: n_s = 1, N = 2, o = 1, [0, 0], z = 0 -> (1, 0).
    assert likelihoods(1, 2, 1, 0, 0, 0) == (F(1), F(0))
    # z = 1 with o = 0 or z = 0 with o = N contradict the sizes: infeasible (0, 0).
    assert likelihoods(1, 2, 2, 0, 2, 0) == (F(0), F(0))
    assert likelihoods(1, 2, 0, 0, 0, 1) == (F(0), F(0))


def test_allowed_z_from_multiplicities() -> None:
    assert allowed_z(2, 0) == (0,)
    assert allowed_z(2, 2) == (1,)
    assert allowed_z(1, 1) == (1,)
    assert allowed_z(3, 1) == (0, 1)


def test_choose_pair_prefers_certain_evidence_then_larger_ratio() -> None:
    inf, two, half, zero = (F(1, 2), F(0)), (F(1), F(1, 2)), (F(1, 2), F(1)), (F(0), F(1))
    assert choose_pair([zero, half, two, inf]) == inf
    assert choose_pair([zero, half, two]) == two
    assert choose_pair([(F(0), F(0)), zero]) == zero  # 0/0 is never chosen
    assert choose_pair([(F(0), F(0))]) is None
    assert choose_pair([]) is None


def test_posterior_special_cases() -> None:
    alpha = F(1, 3)
    assert posterior(alpha, []) == alpha
    # Formula 12: (1/3 * 1 * 1/2) / (1/3 * 1/2 + 2/3 * 1/2 * 1/4) = (1/6) / (1/6 + 1/12) = 2/3.
    assert posterior(alpha, [(F(1), F(1, 2)), (F(1, 2), F(1, 4))]) == F(2, 3)
    # L1 = 0 (certain against s) gives 0, even beside certain evidence for s (L0 = 0), as in
    # the auditor's reference; L0 = 0 alone gives 1.
    assert posterior(alpha, [(F(1), F(1, 2)), (F(0), F(1))]) == 0
    assert posterior(alpha, [(F(1, 5), F(0)), (F(0), F(1))]) == 0
    assert posterior(alpha, [(F(0), F(1)), (F(1, 5), F(0))]) == 0
    assert posterior(alpha, [(F(1), F(1, 2)), (F(1, 5), F(0))]) == 1
    # alpha 0 or >= 1 is final, whatever the evidence.
    assert posterior(F(0), [(F(1), F(0))]) == 0
    assert posterior(F(1), [(F(0), F(1))]) == 1
    assert posterior(F(3, 2), [(F(0), F(1))]) == 1


def _two_single_cluster_releases(
    rows: list[Row], n_s: int, other_rows: list[Row], other_n_s: int
) -> list[PublishedRelease]:
    return [
        PublishedRelease(1, [cluster("c1", rows, {"s": n_s})], {}, rates(s=F(1, 3))),
        PublishedRelease(2, [cluster("c1", other_rows, {"s": other_n_s})], {}, rates(s=F(1))),
    ]


def test_duplicate_rows_take_the_more_favourable_z() -> None:
    # C* = [X, X, Y], s 1 (alpha 1/3); C'* = [X] without s. O = {X}: X twice in C*, once in O,
    # so an X row may be inside or outside O. Ranges: C* [max(1-2,0), 1] = [0,1]; C'* [0,0].
    # z = 0: L1 = C(0,0)C(2,1)/C(2,1) = 1 ; L0 = C(1,0)C(1,1)/C(2,1) = 1/2   (ratio 2)
    # z = 1: L1 = C(0,-1)... = 0          ; L0 = C(1,0)C(1,0)/C(2,0) = 1     (ratio 0)
    # z = 0 wins: beta = (1/3) / (1/3 + 2/3 * 1/2) = 1/2. Y (z = 0 only) gets 1/2 as well.
    x, y = ("x",), ("y",)
    result = posteriors(_two_single_cluster_releases([x, x, y], 1, [x], 0))
    assert [result[0, "c1", i, "s"] for i in range(3)] == [(F(1, 2), F(1, 2))] * 3
    # Now C'* = [X] holds s: its range is [1, 1] and [r1, r2] = [1, 1].
    # z = 0: L1 = C(0,1)... = 0 ; L0 = C(1,1)C(1,0)/C(2,1) = 1/2          (ratio 0)
    # z = 1: L1 = C(0,0)C(2,0)/C(2,0) = 1 ; L0 = C(1,1)C(1,-1) = 0       (ratio +inf)
    # X rows: z = 1, beta = 1 (risk 1/(1/3) = 3). Y (z = 0 only): beta = 0.
    releases = _two_single_cluster_releases([x, x, y], 1, [x], 1)
    result = posteriors(releases)
    assert [result[0, "c1", i, "s"][0] for i in range(3)] == [1, 1, 0]
    risks = serial_risks(releases)
    assert [risks[0, "c1", i, "s"] for i in range(3)] == [3, 3, 0]


def test_certain_evidence_against_wins_over_certain_evidence_for() -> None:
    # C* = [A, B, C], s 1 (alpha 1/3), in release 1; release 2 = [A] with s; release 3 = [A]
    # without s. Both overlaps are {A}, o = 1; C* range [max(1-2,0), 1] = [0, 1].
    # O1: [r1,r2] = [1,1]. For A (z=1): L1 = C(0,0)C(2,0)/C(2,0) = 1, L0 = C(1,1)C(1,-1) = 0.
    #     For B (z=0): L1 = C(0,1)... = 0, L0 = C(1,1)C(1,0)/C(2,1) = 1/2.
    # O2: [r1,r2] = [0,0]. For A (z=1): L1 = C(0,-1)... = 0, L0 = C(1,0)C(1,0)/C(2,0) = 1.
    #     For B (z=0): L1 = C(0,0)C(2,1)/C(2,1) = 1, L0 = C(1,0)C(1,1)/C(2,1) = 1/2.
    # A: (1, 0) and (0, 1): the pair certain against s wins, beta = 0 (the old rule said 1).
    # B and C: (0, 1/2) and (1, 1/2): beta = 0.
    # One cluster per release and no bag: the global composition is the same product over
    # both other releases (the old per-release maximum gave B and C release 3's 1/2).
    a, b, c = ("a",), ("b",), ("c",)
    releases = [
        PublishedRelease(1, [cluster("c1", [a, b, c], {"s": 1})], {}, rates(s=F(1, 3))),
        PublishedRelease(2, [cluster("c1", [a], {"s": 1})], {}, rates(s=F(1))),
        PublishedRelease(3, [cluster("c1", [a], {})], {}, rates()),
    ]
    result = posteriors(releases)
    assert [result[0, "c1", i, "s"] for i in range(3)] == [(F(0), F(0))] * 3
    assert max_risk(releases) == 1  # release 2's row: alpha 1, rate 1


def test_global_share_counts_in_the_cluster_not_in_the_release() -> None:
    # One release, no other: every beta is its prior. Cluster: N(s, C*) = 1 + 1 (share) of 4;
    # release: N(s) = 1 (segment) + 1 (bag) of 4, the share only re-splits the bag.
    only = PublishedRelease(
        1,
        [PublishedCluster("c1", [("a",), ("b",), ("c",), ("d",)], {"s": 1}, {"s": 1})],
        {"s": 1},
        rates(s=F(1, 2)),
    )
    assert posteriors([only])[0, "c1", 0, "s"] == (F(1, 2), F(1, 2))
    only.global_bag = {"s": 2}
    assert posteriors([only])[0, "c1", 0, "s"] == (F(1, 2), F(3, 4))


# --------------------------------------------------------------------------- brute force


def _count_subsets(
    n: int, n_s: int, condition_member: int | None, inside: set[int], lo: int, hi: int
) -> tuple[int, int]:
    """Over all ways to give s to ``n_s`` of ``n`` rows (uniform), restricted to those where row
    0 has s (``condition_member`` 1), has not (0) or anything (None): (matching, all), matching
    meaning the number of s rows in ``inside`` is within ``[lo, hi]``."""
    matching = total = 0
    for chosen in combinations(range(n), n_s):
        if condition_member is not None and (0 in chosen) != bool(condition_member):
            continue
        total += 1
        matching += lo <= len(inside.intersection(chosen)) <= hi
    return matching, total


@pytest.mark.parametrize("n", range(2, 8))
def test_formulas_13_14_are_hypergeometric_probabilities(n: int) -> None:
    """L1 = P(r1 <= #s in O <= r2 | row has s), L0 the same given it has not, where the n_s
    copies of s sit on a uniformly random set of rows and the row is in O iff z = 1."""
    for n_s in range(1, n):
        for z in (0, 1):
            for o in range(z, n + z):  # z = 0: o <= n - 1 ; z = 1: o >= 1
                inside = set(range(o)) if z else set(range(1, o + 1))
                for r1 in range(o + 1):
                    for r2 in range(r1, o + 1):
                        m1, t1 = _count_subsets(n, n_s, 1, inside, r1, r2)
                        m0, t0 = _count_subsets(n, n_s, 0, inside, r1, r2)
                        expected = (F(m1, t1), F(m0, t0))
                        assert likelihoods(n_s, n, o, r1, r2, z) == expected


def _feasible_counts(rows: list[Row], n_s: int, overlap_positions: set[int]) -> set[int]:
    """Every number of s copies the overlap can hold when n_s of the rows have s."""
    return {len(overlap_positions.intersection(c)) for c in combinations(range(len(rows)), n_s)}


def _overlap_positions(rows: list[Row], other: list[Row]) -> set[int]:
    """Positions of the multiset intersection: the first min(m, m') copies of each set."""
    budget = Counter(rows) & Counter(other)
    positions = set()
    for i, row in enumerate(rows):
        if budget[row] > 0:
            budget[row] -= 1
            positions.add(i)
    return positions


def _brute_posterior(rows: list[Row], n_s: int, other: list[Row], other_n_s: int) -> list[F]:
    """Bayes by enumeration for one overlap: P(row has s | #s in O within the feasible counts
    of both clusters), maximised over which copy of a repeated set is the victim's."""
    alpha = F(n_s, len(rows))
    mine, theirs = _overlap_positions(rows, other), _overlap_positions(other, rows)
    if not mine:
        return [alpha] * len(rows)
    allowed = _feasible_counts(rows, n_s, mine) & _feasible_counts(other, other_n_s, theirs)
    per_position = []
    for p in range(len(rows)):
        hits = members = 0
        for chosen in combinations(range(len(rows)), n_s):
            if len(mine.intersection(chosen)) in allowed:
                hits += 1
                members += p in chosen
        per_position.append(F(members, hits) if hits else alpha)
    return [max(per_position[q] for q in range(len(rows)) if rows[q] == row) for row in rows]


_ROWS = st.lists(st.sampled_from([("a",), ("b",), ("c",), ("d",), ("e",)]), min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
@given(rows=_ROWS, other=_ROWS, data=st.data())
def test_single_overlap_posterior_matches_bayes_by_enumeration(
    rows: list[Row], other: list[Row], data: st.DataObject
) -> None:
    n_s = data.draw(st.integers(0, len(rows)), label="n_s")
    other_n_s = data.draw(st.integers(0, len(other)), label="other_n_s")
    result = posteriors(_two_single_cluster_releases(rows, n_s, other, other_n_s))
    expected = _brute_posterior(rows, n_s, other, other_n_s)
    for i, beta in enumerate(expected):
        # One cluster per release, no bag: the global view is the cluster itself. Without a
        # copy of s the term is not judged for release 1 (its beta would be 0).
        assert result.get((0, "c1", i, "s"), (F(0), F(0))) == (beta, beta)
        assert ((0, "c1", i, "s") in result) == (n_s > 0)


def _brute_pair(
    rows: list[Row], n_s: int, inside: set[int], victim: int, allowed: set[int]
) -> tuple[F, F]:
    """(P(#s in O in allowed | victim has s), same | victim has not s) by enumerating every
    placement of the n_s copies; (0, 0) where a condition is impossible."""
    hits = {True: 0, False: 0}
    total = {True: 0, False: 0}
    for chosen in combinations(range(len(rows)), n_s):
        has = victim in chosen
        total[has] += 1
        hits[has] += len(inside.intersection(chosen)) in allowed
    return (
        F(hits[True], total[True]) if total[True] else F(0),
        F(hits[False], total[False]) if total[False] else F(0),
    )


def _brute_beta(rows: list[Row], n_s: int, others: list[tuple[list[Row], int]]) -> list[F]:
    """Formula 12 for every row of a view from enumerated likelihoods: one overlap per other
    view (plain multiset intersection), the copy of the row's set that favours s most per
    overlap, the contradictory-evidence rule of design.md §4."""
    alpha = F(n_s, len(rows))
    result = []
    for p in range(len(rows)):
        if alpha in (0, 1):
            result.append(alpha)
            continue
        pairs = []
        for other, other_n_s in others:
            mine, theirs = _overlap_positions(rows, other), _overlap_positions(other, rows)
            if not mine:
                continue
            allowed = _feasible_counts(rows, n_s, mine) & _feasible_counts(other, other_n_s, theirs)
            if not allowed:
                continue
            candidates = [
                pair
                for q in range(len(rows))
                if rows[q] == rows[p]
                for pair in [_brute_pair(rows, n_s, mine, q, allowed)]
                if pair != (F(0), F(0))
            ]
            best = None
            for l1, l0 in candidates:  # largest L1/L0 by cross-multiplication (inf = L0 0)
                if best is None or l1 * best[1] > best[0] * l0:
                    best = (l1, l0)
            if best is not None:
                pairs.append(best)
        if any(l1 == 0 for l1, _ in pairs):
            result.append(F(0))
        elif any(l0 == 0 for _, l0 in pairs):
            result.append(F(1))
        else:
            yes, no = alpha, 1 - alpha
            for l1, l0 in pairs:
                yes, no = yes * l1, no * l0
            result.append(yes / (yes + no))
    return result


_SMALL = st.lists(st.sampled_from([("a",), ("b",), ("c",), ("d",)]), min_size=1, max_size=4)


@settings(max_examples=150, deadline=None)
@given(rows=_SMALL, first=_SMALL, second=_SMALL, data=st.data())
def test_spread_sets_and_global_product_match_enumeration(
    rows: list[Row], first: list[Row], second: list[Row], data: st.DataObject
) -> None:
    """Release 1 = one cluster; release 2 = two clusters that may share sets with each other
    and with release 1. Every pair of clusters of the two releases overlaps; the global view
    of release 1 overlaps the whole of release 2 once."""
    n_s = data.draw(st.integers(1, len(rows)), label="n_s")
    n_first = data.draw(st.integers(0, len(first)), label="n_first")
    n_second = data.draw(st.integers(0, len(second)), label="n_second")
    releases = [
        PublishedRelease(1, [cluster("c1", rows, {"s": n_s})], {}, rates(s=F(1, 2))),
        PublishedRelease(
            2,
            [cluster("d1", first, {"s": n_first}), cluster("d2", second, {"s": n_second})],
            {},
            rates(s=F(1, 3)),
        ),
    ]
    result = posteriors(releases)
    beta_cluster = _brute_beta(rows, n_s, [(first, n_first), (second, n_second)])
    beta_global = _brute_beta(rows, n_s, [(first + second, n_first + n_second)])
    for i in range(len(rows)):
        assert result[0, "c1", i, "s"] == (beta_cluster[i], beta_global[i])
    whole_2 = _brute_beta(first + second, n_first + n_second, [(rows, n_s)])
    for cid, own, n_own, offset in (
        ("d1", first, n_first, 0),
        ("d2", second, n_second, len(first)),
    ):
        cluster_2 = _brute_beta(own, n_own, [(rows, n_s)])
        for i in range(len(own)):
            expected = (cluster_2[i], whole_2[offset + i])
            if n_first + n_second:
                assert result[1, cid, i, "s"] == expected
            else:
                assert (1, cid, i, "s") not in result

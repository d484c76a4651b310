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
    comb,
    likelihoods,
    max_risk,
    overlap_range,
    posterior,
    posteriors,
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


def test_judged_terms_are_those_with_a_rate_or_copies() -> None:
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


def test_violations_allow_only_a_relative_tolerance() -> None:
    releases = [release_1(), release_2()]  # Laura's HIV risk is exactly 3
    assert violations(releases, 3) == []
    assert violations(releases, 3 * (1 - 1e-12)) == []  # within 1e-9: floating point noise
    assert violations(releases, F(3) * (1 - F(1, 10**7))) == [(0, "c1", 0, "HIV", F(3))]


def test_malformed_release_with_copies_but_no_rate_is_refused() -> None:
    broken = release_1(rates(cancer=F(1, 3), herpes=F(1, 6)))  # HIV copies, no HIV rate
    with pytest.raises(ValueError, match="HIV"):
        serial_risks([broken, release_2()])


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
    # L1 = 0 kills s unless another overlap is certain evidence of s (L0 = 0), which wins.
    assert posterior(alpha, [(F(1), F(1, 2)), (F(0), F(1))]) == 0
    assert posterior(alpha, [(F(1, 5), F(0)), (F(0), F(1))]) == 1
    assert posterior(F(0), [(F(1), F(0))]) == 0
    assert posterior(F(1), [(F(0), F(1))]) == 1


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


def test_certain_evidence_wins_over_a_contradicting_overlap() -> None:
    # C* = [A, B, C], s 1 (alpha 1/3), in release 1; release 2 = [A] with s; release 3 = [A]
    # without s. Both overlaps are {A}, o = 1; C* range [max(1-2,0), 1] = [0, 1].
    # O1: [r1,r2] = [1,1]. For A (z=1): L1 = C(0,0)C(2,0)/C(2,0) = 1, L0 = C(1,1)C(1,-1) = 0.
    #     For B (z=0): L1 = C(0,1)... = 0, L0 = C(1,1)C(1,0)/C(2,1) = 1/2.
    # O2: [r1,r2] = [0,0]. For A (z=1): L1 = C(0,-1)... = 0, L0 = C(1,0)C(1,0)/C(2,0) = 1.
    #     For B (z=0): L1 = C(0,0)C(2,1)/C(2,1) = 1, L0 = C(1,0)C(1,1)/C(2,1) = 1/2.
    # A: (1, 0) and (0, 1): certain evidence wins, beta = 1. B: (0, 1/2) and (1, 1/2): beta = 0.
    # The global composition compares releases one at a time and keeps the highest posterior
    # (team decision): for B that is release 3's O2 alone, odds (1/3)/(2/3) * 2 = 1, so 1/2.
    a, b, c = ("a",), ("b",), ("c",)
    releases = [
        PublishedRelease(1, [cluster("c1", [a, b, c], {"s": 1})], {}, rates(s=F(1, 3))),
        PublishedRelease(2, [cluster("c1", [a], {"s": 1})], {}, rates(s=F(1))),
        PublishedRelease(3, [cluster("c1", [a], {})], {}, rates()),
    ]
    result = posteriors(releases)
    expected = [(F(1), F(1)), (F(0), F(1, 2)), (F(0), F(1, 2))]
    assert [result[0, "c1", i, "s"] for i in range(3)] == expected


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
        # One cluster per release, no bag: the global view is the cluster itself.
        assert result[0, "c1", i, "s"] == (beta, beta)

"""Wong et al.'s global guarantee (app.core.variants.wong), checked against the paper's own numbers.

Running example: Figure 1 (raw tables T1, T2), Figure 2 (groups of 2), Figure 4 (groups of 4),
Examples 2 and 3, Table 1. Sex and zip code are the non-private terms, diseases are private.
"""

from __future__ import annotations

import copy
import math
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.errors import InvalidCorpus
from app.core.history import SeriesHistory
from app.core.model import Publication, Transaction
from app.core.params import PublishParams
from app.core.pipeline import publish
from app.core.variants.wong import (
    breach_probability,
    constant_ratio,
    geometric_ratio,
    minimum_ratio,
    publish_wong,
    required_ratio,
    statistics_update,
    within_guarantee,
)

Record = tuple[str, str, str, str]  # individual, sex, zip code, disease

# Figure 1.
T1: list[Record] = [
    ("o1", "M", "65001", "flu"),
    ("o2", "M", "65002", "chlamydia"),
    ("o3", "F", "65014", "flu"),
    ("o4", "F", "65015", "fever"),
]
T2: list[Record] = [
    ("o1", "M", "65001", "chlamydia"),
    ("o2", "M", "65002", "flu"),
    ("o3", "F", "65014", "fever"),
    ("o5", "F", "65010", "flu"),
]
# Figure 2 groups the two men and the two women of each table; Figure 4 makes one group.
FIGURE_2 = {"M": "G1", "F": "G2"}
DISEASES = frozenset({"flu", "chlamydia", "fever", "cold", "asthma", "gout", "mumps", "measles"})


def _corpus(records: Sequence[Record], labels: dict[str, str] | None = None) -> list[Transaction]:
    return [
        Transaction.of(
            {f"sex={sex}", f"zip={zipcode}", disease},
            individual=who,
            cluster=None if labels is None else labels[sex],
        )
        for who, sex, zipcode, disease in records
    ]


def _entries_from_figure(
    tables: Sequence[Sequence[Record]], group_of: dict[str, str], who: str, term: str
) -> list[tuple[int, int]]:
    """(n_j, n_{j,s}) of ``who``'s group in each table where that group holds ``term``."""
    entries = []
    for table in tables:
        groups: dict[str, list[Record]] = {}
        for record in table:
            groups.setdefault(group_of[record[1]], []).append(record)
        mine = next(g for g in groups.values() if any(r[0] == who for r in g))
        copies = sum(1 for r in mine if r[3] == term)
        if copies:
            entries.append((len(mine), copies))
    return entries


def _publish_series(
    corpora: Sequence[Sequence[Transaction]], private: frozenset[str], params: PublishParams
) -> tuple[SeriesHistory, list[Publication]]:
    """Publish each corpus in turn, appending statistics_update to the statistics file."""
    history = SeriesHistory()
    publications = []
    for corpus in corpora:
        publication = publish_wong(history, corpus, private, params)
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
        for key, terms in statistics_update(publication).items():
            for term, entry in terms.items():
                history.statistics.setdefault(key, {}).setdefault(term, []).append(entry)
        publications.append(publication)
    return history, publications


def _assert_global_guarantee(history: SeriesHistory, l: int) -> None:  # noqa: E741
    for key, terms in history.statistics.items():
        for term, entries in terms.items():
            assert within_guarantee(entries, l), (key, term, entries)
            assert breach_probability(entries) <= 1 / l + 1e-12, (key, term, entries)


# --- Lemma 4, Theorem 1, Table 1 -------------------------------------------------------------


@pytest.mark.parametrize(
    ("group_of", "expected"),
    [
        (FIGURE_2, 3 / 4),  # Figure 2, groups of size 2 (Example 2)
        ({"M": "G", "F": "G"}, 7 / 16),  # Figure 4, groups of size 4 (Example 2)
    ],
)
def test_breach_probability_of_the_running_example(
    group_of: dict[str, str], expected: float
) -> None:
    entries = _entries_from_figure([T1, T2], group_of, "o2", "chlamydia")
    assert breach_probability(entries) == expected


def test_breach_probability_counts_only_releases_holding_s() -> None:
    # Lemma 5: a release where o's group lacked s (n_{j,s} = 0) changes nothing.
    assert breach_probability([(4, 1), (7, 0), (4, 1)]) == 7 / 16
    assert breach_probability([]) == 0.0
    assert breach_probability([(3, 3)]) == 1.0


def test_minimum_ratio_of_example_3() -> None:
    assert minimum_ratio([(4, 1), (4, 1)], 2) == 9


def test_minimum_ratio_without_past_is_l_and_infeasible_is_infinite() -> None:
    assert minimum_ratio([], 2) == 2
    assert minimum_ratio([], 5) == 5
    # Theorem 2: a release exactly at the minimum (p = 1/2) leaves no feasible ratio.
    assert minimum_ratio([(2, 1)], 2) == math.inf
    assert minimum_ratio([(2, 1), (2, 1)], 2) == math.inf


@given(
    past=st.lists(st.tuples(st.integers(1, 12), st.integers(0, 12)), max_size=4).map(
        lambda xs: [(n, min(ns, n)) for n, ns in xs]
    ),
    n=st.integers(1, 40),
    ns=st.integers(1, 40),
    l=st.integers(2, 6),
)
def test_theorem_1_is_an_if_and_only_if(
    past: list[tuple[int, int]],
    n: int,
    ns: int,
    l: int,  # noqa: E741
) -> None:
    ns = min(ns, n)
    bound = minimum_ratio(past, l)
    within = within_guarantee([*past, (n, ns)], l)
    if bound == math.inf:
        assert not within
    else:
        assert within == (Fraction(n, ns) >= Fraction(bound) - Fraction(1, 10**9))


@pytest.mark.parametrize(
    ("l", "k_prime", "expected"),
    [  # Table 1, literally
        (2, 2, 3.44),
        (2, 5, 7.75),
        (2, 20, 29.41),
        (5, 20, 90.13),
        (10, 20, 190.33),
        (2, 10, 15.10),
        (5, 10, 45.35),
        (10, 10, 95.42),
    ],
)
def test_constant_ratio_matches_table_1(l: int, k_prime: int, expected: float) -> None:  # noqa: E741
    assert constant_ratio(l, k_prime) == pytest.approx(expected, rel=0.015)


def test_constant_ratio_held_k_prime_times_reaches_exactly_one_over_l() -> None:
    ratio = constant_ratio(3, 4)
    assert 1 - (1 - 1 / ratio) ** 4 == pytest.approx(1 / 3)


def test_strategies() -> None:
    geometric = PublishParams(l=2, strategy="geometric", alpha=3.0)
    assert geometric_ratio([(4, 1), (4, 1)], 2, 2.0) == 18
    assert required_ratio([], geometric) == 6
    assert required_ratio([(4, 1), (4, 1)], geometric) == 27
    constant = PublishParams(l=2, strategy="constant_ratio", k_prime=2)
    assert required_ratio([], constant) == constant_ratio(2, 2)
    # Past k' linked releases, Theorem 1's minimum takes over (Example 3).
    assert required_ratio([(4, 1), (4, 1)], constant) == 9
    assert required_ratio([(2, 1)], constant) == math.inf


# --- publish_wong on the running example -----------------------------------------------------

EXAMPLE_3_T3: list[Record] = [
    ("o2", "M", "65002", "chlamydia"),
    *[
        (f"o{i}", "M" if i % 2 else "F", f"650{i:02d}", disease)
        for i, disease in zip(
            range(6, 17),
            [
                "cold",
                "asthma",
                "gout",
                "mumps",
                "measles",
                "cold",
                "asthma",
                "gout",
                "mumps",
                "measles",
                "fever",
            ],
            strict=True,
        )
    ],
]


def test_running_example_reproduces_figure_4_and_keeps_p_within_one_half() -> None:
    params = PublishParams(l=2, strategy="constant_ratio", k_prime=2, cluster_size=2)
    corpora = [_corpus(T1, FIGURE_2), _corpus(T2, FIGURE_2)]
    history, (first, second) = _publish_series(corpora, DISEASES, params)
    for publication in (first, second):
        # Figure 2's groups of 2 are merged into Figure 4's single group of 4 ...
        (cluster,) = publication.release.clusters
        assert cluster.size == 4
        assert publication.report["merges"] == 1
        # ... and one of the two flu copies is suppressed: 4/2 < ñ_c(2, 2) ≈ 3.41.
        assert cluster.private_counts == {"chlamydia": 1, "fever": 1, "flu": 1}
        assert publication.ledger.suppressed == {"flu": 1}
        assert publication.report["suppressed"] == 1
    assert history.statistics["o2"]["chlamydia"] == [(4, 1), (4, 1)]
    assert breach_probability(history.statistics["o2"]["chlamydia"]) == 7 / 16  # Example 2
    assert history.statistics["o4"] == {s: [(4, 1)] for s in ("chlamydia", "fever", "flu")}
    _assert_global_guarantee(history, 2)


def test_running_example_third_release_needs_ratio_9_for_o2() -> None:
    params = PublishParams(l=2, strategy="constant_ratio", k_prime=2, cluster_size=2)
    corpora = [_corpus(T1, FIGURE_2), _corpus(T2, FIGURE_2), _corpus(EXAMPLE_3_T3)]
    history, publications = _publish_series(corpora, DISEASES, params)
    third = publications[2]
    n3, n3s = statistics_update(third)["o2"]["chlamydia"]
    assert n3s == 1 and n3 >= 9  # Example 3: AG_3(o2) needs at least 9 rows
    assert third.report["suppressed"] == 0
    _assert_global_guarantee(history, 2)


def test_running_example_without_labels_starts_from_similarity_runs() -> None:
    params = PublishParams(l=2, strategy="constant_ratio", k_prime=2, cluster_size=2)
    history, _ = _publish_series(
        [_corpus(T1), _corpus(T2), _corpus(EXAMPLE_3_T3)], DISEASES, params
    )
    _assert_global_guarantee(history, 2)


# --- publish_wong: contract and invariants ---------------------------------------------------


def _check_invariants(corpus: list[Transaction], private: frozenset[str], pub: Publication) -> None:
    clusters, ledgers = pub.release.clusters, pub.ledger.clusters
    members = [who for ledger in ledgers for who in ledger.individuals]
    assert sorted(members) == sorted(t.individual for t in corpus)  # a partition
    by_who = {t.individual: t for t in corpus}
    raw: Counter[str] = Counter()
    for cluster, ledger in zip(clusters, ledgers, strict=True):
        assert [
            tuple(sorted(by_who[w].terms - private)) for w in ledger.individuals
        ] == cluster.rows
        assert cluster.global_share == {} and cluster.counterfeits == 0
        for who in ledger.individuals:
            raw.update(by_who[who].terms & private)
            expected = {s: (cluster.size, c) for s, c in cluster.private_counts.items()}
            assert statistics_update(pub).get(str(who), {}) == expected
    published = pub.release.term_totals()
    assert published + Counter(pub.ledger.suppressed) == raw
    assert pub.release.global_bag == {}
    assert pub.release.population_rates == {s: published[s] / len(corpus) for s in private}


def test_publication_is_a_partition_with_consistent_counts_and_statistics() -> None:
    corpus = _corpus(EXAMPLE_3_T3)
    params = PublishParams(l=3, strategy="geometric", alpha=2.0, cluster_size=3, seed=7)
    publication = publish_wong(SeriesHistory(), corpus, DISEASES, params)
    _check_invariants(corpus, DISEASES, publication)
    again = publish_wong(SeriesHistory(), corpus, DISEASES, params)
    assert again.release == publication.release  # deterministic for a seed


def test_history_is_not_mutated_and_pipeline_dispatches_to_wong() -> None:
    history, _ = _publish_series([_corpus(T1)], DISEASES, PublishParams(cluster_size=2))
    before = copy.deepcopy(history)
    phases: list[str] = []
    publication = publish(
        "wong",
        history,
        _corpus(T2),
        DISEASES,
        PublishParams(),
        lambda phase, _: phases.append(phase),
    )
    assert history == before
    assert publication.release.release_no == 2
    assert phases[0] == "anony" and phases[-1] == "verify"


def test_spent_budget_suppresses_every_copy_in_the_group() -> None:
    # p(o1, flu) = 1/2 already: no group holding flu is feasible for o1 (Theorem 2).
    history = SeriesHistory(statistics={"o1": {"flu": [(2, 1)]}})
    corpus = _corpus(
        [("o1", "M", "1", "flu"), ("o2", "M", "2", "flu"), ("o3", "M", "3", "cold")]
        + [(f"x{i}", "F", str(i), "gout") for i in range(4, 14)]
    )
    params = PublishParams(l=2, strategy="geometric", alpha=2.0, cluster_size=3)
    publication = publish_wong(history, corpus, DISEASES, params)
    assert "flu" not in statistics_update(publication).get("o1", {})
    assert publication.ledger.suppressed.get("flu", 0) >= 1
    _check_invariants(corpus, DISEASES, publication)


@pytest.mark.parametrize(
    ("corpus", "field"),
    [
        ([Transaction.of({"a", "flu"}, "o1"), Transaction.of({"b"}, "o1")], "individual"),
        ([Transaction.of({"a", "flu"}, None)], "individual"),
        ([], None),
    ],
)
def test_invalid_corpora_are_rejected(corpus: list[Transaction], field: str | None) -> None:
    with pytest.raises(InvalidCorpus) as raised:
        publish_wong(SeriesHistory(), corpus, DISEASES, PublishParams())
    assert raised.value.details.get("field") == field


def test_scales_to_many_transactions() -> None:
    import random

    rng = random.Random(3)
    words = [f"w{i}" for i in range(300)]
    private = frozenset(f"s{i}" for i in range(40))
    pool = sorted(private)
    corpus = [
        Transaction.of(
            {*rng.sample(words, rng.randint(1, 5)), *rng.sample(pool, rng.choice([0, 1, 1, 2]))},
            f"p{i}",
        )
        for i in range(20_000)
    ]
    history, publications = _publish_series([corpus, corpus[5000:]], private, PublishParams())
    _assert_global_guarantee(history, 2)
    assert publications[0].report["groups"] > 100


# --- the global guarantee over random series -------------------------------------------------


@st.composite
def _series(draw: st.DrawFn) -> tuple[list[list[Transaction]], frozenset[str], PublishParams]:
    private = frozenset(f"s{i}" for i in range(draw(st.integers(1, 4))))
    words = ["a", "b", "c", "d", "e", "f"]
    people = list(range(70))
    releases = []
    present: set[int] = set()
    for _ in range(draw(st.integers(3, 5))):
        # Individuals persist, leave and join: keep a drawn subset, add newcomers.
        kept = draw(st.sets(st.sampled_from(sorted(present)))) if present else set()
        fresh = draw(
            st.sets(
                st.sampled_from(people),
                min_size=max(0, 5 - len(kept)),
                max_size=max(0, 60 - len(kept)),
            )
        )
        present = kept | fresh
        if len(present) > 60:
            present = set(sorted(present)[:60])
        labelled = draw(st.booleans()) and draw(st.booleans())
        corpus = []
        for who in sorted(present):
            terms = draw(st.sets(st.sampled_from(words), min_size=1, max_size=3))
            secret = draw(st.sets(st.sampled_from(sorted(private)), max_size=2))
            label = f"g{draw(st.integers(0, 3))}" if labelled else None
            corpus.append(Transaction.of(terms | secret, f"p{who}", label))
        releases.append(corpus)
    strategy = draw(st.sampled_from(["constant_ratio", "geometric"]))
    params = PublishParams(
        l=draw(st.integers(2, 4)),
        strategy=strategy,
        k_prime=draw(st.integers(1, 5)),
        alpha=draw(st.sampled_from([1.5, 2.0, 3.0])),
        cluster_size=draw(st.integers(1, 8)),
        seed=draw(st.integers(0, 2**32)),
    )
    return releases, private, params


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_series())
def test_random_series_keep_the_global_guarantee(
    series: tuple[list[list[Transaction]], frozenset[str], PublishParams],
) -> None:
    corpora, private, params = series
    history, publications = _publish_series(corpora, private, params)
    for corpus, publication in zip(corpora, publications, strict=True):
        _check_invariants(corpus, private, publication)
    _assert_global_guarantee(history, params.l)

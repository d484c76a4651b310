"""The attack on Anony-style releases: private copies and counterfeit rows."""

from __future__ import annotations

import math

import pytest

from app.core.attacks.anony import reassociate_private, row_coherence
from app.core.attacks.anony_measures import (
    auc,
    counterfeit_auc,
    measure_private,
    row_sources,
)
from app.core.attacks.scoring import CooccurrenceRelatedness
from app.core.errors import InvalidCorpus
from app.core.history import SeriesHistory
from app.core.model import ClusterLedger, ReleaseLedger, Transaction, release_from_counts
from app.core.params import PublishParams
from app.core.pipeline import publish
from tests.core.attacks.topics import PRIVATE, world

BACKGROUND = CooccurrenceRelatedness([t.terms for t in world(400, 4)])

CORPUS = [
    Transaction.of(["cough", "fever", "hiv"], "ann"),
    Transaction.of(["arson", "theft"], "bob"),
    Transaction.of(["nurse", "ward", "hiv"], "cy"),
    Transaction.of(["court", "judge", "parole"], "dan"),
]
# Rows shuffled as a publisher would, plus one counterfeit drawn across the two topics.
RELEASE = release_from_counts(
    1,
    [
        (
            [("court", "judge"), ("cough", "fever"), ("fever", "judge"), ("arson", "theft"),
             ("nurse", "ward")],
            {"hiv": 2},
            {"parole": 1},
            1,
        )
    ],
    {},
    {"hiv": 0.4, "parole": 0.2},
)  # fmt: skip
LEDGER = ReleaseLedger([ClusterLedger([2], individuals=["dan", "ann", None, "bob", "cy"])])


def test_rows_trace_back_to_their_transactions_through_individuals() -> None:
    assert row_sources(CORPUS, RELEASE, LEDGER) == [[3, 0, None, 1, 2]]
    anonymous = [Transaction.of(t.terms) for t in CORPUS]
    with pytest.raises(InvalidCorpus):
        row_sources(anonymous, RELEASE, LEDGER)


@pytest.mark.parametrize("method", ["aba", "mra", "rga"])
def test_semantics_put_the_private_copies_on_their_rows(method: str) -> None:
    guess = reassociate_private(RELEASE, BACKGROUND, method)
    assert guess.clusters[0]["hiv"] == (1, 4)
    # MRA and RGA see only the best-related term of a row: judge, in the true row and in the
    # counterfeit alike, a tie (broken at random); ABA's average tells them apart.
    expected = {(0,)} if method == "aba" else {(0,), (2,)}
    assert guess.clusters[0]["parole"] in expected


def test_aba_puts_every_copy_right_where_random_placement_expects_a_third() -> None:
    guess = reassociate_private(RELEASE, BACKGROUND, "aba")
    report = measure_private(CORPUS, row_sources(CORPUS, RELEASE, LEDGER), guess, RELEASE)
    assert (report.copies, report.on_true_row, report.share) == (3, 3, 1.0)
    assert report.random_expected == pytest.approx((2 * 2 / 5 + 1 * 1 / 5) / 3)
    assert report.prior == pytest.approx((2 * 2 / 5 + 1 * 1 / 5) / 3)
    assert report.lift == pytest.approx(3.0)


@pytest.mark.parametrize("method", ["aba", "mra", "rga"])
def test_a_cluster_of_empty_rows_is_placed_blind(method: str) -> None:
    release = release_from_counts(1, [([(), (), ()], {"hiv": 2}, {}, 0)], {}, {"hiv": 0.6})
    guess = reassociate_private(release, BACKGROUND, method)
    assert len(guess.clusters[0]["hiv"]) == 2


def test_random_placement_puts_as_many_copies() -> None:
    guess = reassociate_private(RELEASE, None, "random", seed=1)
    assert {s: len(rows) for s, rows in guess.clusters[0].items()} == {"hiv": 2, "parole": 1}


def test_the_counterfeit_is_the_least_coherent_row() -> None:
    coherence = row_coherence(RELEASE, BACKGROUND)[0]
    assert min(range(5), key=coherence.__getitem__) == 2
    result = counterfeit_auc(row_sources(CORPUS, RELEASE, LEDGER), [coherence], RELEASE)
    assert result["all_rows"] == result["multi_term_rows"] == 1.0
    assert result["row_size"] == 0.5  # every row has two terms: size tells nothing


def test_auc_is_the_mann_whitney_statistic() -> None:
    assert auc([3.0, 2.0], [1.0, 0.0]) == 1.0
    assert auc([1.0], [1.0]) == 0.5
    assert auc([0.0, 0.0], [1.0, 2.0]) == 0.0
    assert math.isnan(auc([], [1.0]))


@pytest.mark.parametrize("method", ["anony", "sanony", "wong", "inv"])
def test_every_method_release_can_be_attacked_and_scored(method: str) -> None:
    corpus = world(120, 5)
    history = SeriesHistory()
    for seed in (6, 5):
        batch = corpus if seed == 5 else world(120, seed)
        publication = publish(method, history, batch, PRIVATE, PublishParams(cluster_size=6))
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
    release, ledger = publication.release, publication.ledger
    sources = row_sources(corpus, release, ledger)
    assert sorted(s for c in sources for s in c if s is not None) == list(range(len(corpus)))
    for selection in ("aba", "random"):
        guess = reassociate_private(release, BACKGROUND, selection)
        report = measure_private(corpus, sources, guess, release)
        assert report.copies == sum(
            min(c.n_s(s), c.size) for c in release.clusters for s in c.private_terms()
        )
        assert 0 <= report.on_true_row <= report.copies


def test_inv_values_are_scored_with_their_own_holding_test() -> None:
    from app.core.variants.inv import sensitive_value

    corpus = world(120, 5)
    publication = publish("inv", SeriesHistory(), corpus, PRIVATE, PublishParams(cluster_size=6))
    release, ledger = publication.release, publication.ledger
    sources = row_sources(corpus, release, ledger)
    guess = reassociate_private(release, None, "random", seed=0)
    as_terms = measure_private(corpus, sources, guess, release)
    as_values = measure_private(
        corpus,
        sources,
        guess,
        release,
        lambda t, value: sensitive_value(t.terms & PRIVATE) == value,
    )
    # Inv publishes NULL and "hiv|parole" as values no transaction holds as a term.
    assert as_values.random_expected > as_terms.random_expected
    assert as_values.on_true_row >= as_terms.on_true_row

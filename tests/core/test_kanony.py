"""Kanony (SPEC 7): categorisation, global-bag invariance, and Sanony's guarantee kept."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from app.core.errors import InvalidParameter, PublicationFailed
from app.core.history import SeriesHistory
from app.core.model import Publication, PublishedRelease, ReleaseLedger, Transaction
from app.core.params import parse_params
from app.core.pipeline import publish
from app.core.variants.kanony import categorise, global_bag_counterfeits, retained_terms
from tests.core.paper_example import PAPER_MODE
from tests.core.paper_example import PRIVATE as SANONY_PRIVATE
from tests.core.paper_example import corpus as sanony_corpus
from tests.core.series_strategies import PUBLIC_TERMS, SmallSeries, small_series
from tests.oracle.serial_risk import violations

#: The Kanony paper's prisoners (Tables 2 and 3), clustered as in Tables 5 and 6.
PRIVATE = frozenset({"HIV", "lung cancer", "cancer", "COVID-19", "herpes", "diabetes"})
RELEASE_1 = [
    ("g1", {"theft", "arson", "fraud", "HIV"}),  # t1 Laura
    ("g1", {"theft", "arson", "smoking", "lung cancer"}),  # t2 Lucy
    ("g2", {"vandal", "arson"}),  # t3 Martin
    ("g2", {"abuse", "arson", "cancer", "COVID-19"}),  # t4 Shane
    ("g3", {"DUI", "assault", "HIV", "herpes"}),  # t5 John
    ("g3", {"DUI", "assault"}),  # t6 Stacy
]
#: Table 6: t1, t5 (John, the only herpes) and t6 are gone; Ben (t7) and Ivy (t8) arrive.
RELEASE_2 = [
    ("g1", {"theft", "arson", "smoking", "lung cancer"}),  # t2
    ("g1", {"theft", "arson", "murder", "lung cancer", "diabetes"}),  # t7 Ben
    ("g2", {"vandal", "arson"}),  # t3
    ("g2", {"abuse", "arson", "cancer", "COVID-19"}),  # t4
    ("g2", {"abuse", "arson", "mansl"}),  # t8 Ivy
]
#: Table 8's categories for the offences (a one-level taxonomy).
TAXONOMY = {
    "theft": "property crime",
    "fraud": "property crime",
    "vandal": "property crime",
    "arson": "felony",
    "murder": "felony",
    "mansl": "felony",
    "abuse": "personal crime",
    "assault": "personal crime",
    "smoking": "misdemeanor",
    "DUI": "misdemeanor",
}


def _prisoners(records: list[tuple[str, set[str]]]) -> list[Transaction]:
    return [Transaction.of(terms, cluster=label) for label, terms in records]


def _publish(
    method: str,
    corpora: list[list[Transaction]],
    private: frozenset[str],
    raw: Mapping[str, object],
) -> tuple[list[PublishedRelease], list[Publication]]:
    if method in ("sanony", "kanony"):
        # The paper's mode: these tests reproduce its tables (docs/methods.md for the defaults).
        raw = {**PAPER_MODE, "anony_r_th": raw.get("r_th", 8.0), **raw}
    params = parse_params(method, raw)
    history = SeriesHistory()
    publications: list[Publication] = []
    for corpus in corpora:
        publication = publish(method, history, corpus, private, params)
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
        publications.append(publication)
    return history.releases, publications


def _bag_terms(release: PublishedRelease) -> set[str]:
    return {s for s, k in release.global_bag.items() if k}


# -- critical absence (Tables 5 and 6) -------------------------------------------------------


def test_critical_absence_of_tables_5_and_6_is_closed_by_bag_counterfeits() -> None:
    corpora = [_prisoners(RELEASE_1), _prisoners(RELEASE_2)]
    raw = {"r_th": 2, "cluster_size": 2, "seed": 7}
    anony, _ = _publish("anony", corpora, PRIVATE, raw)
    sanony, _ = _publish("sanony", corpora, PRIVATE, raw)
    kanony, publications = _publish("kanony", corpora, PRIVATE, raw)
    # Table 5: herpes (John's) is in release 1's bag, beside COVID-19.
    assert {"herpes", "COVID-19"} <= _bag_terms(kanony[0])
    # Table 6: once John is deleted, herpes leaves the bag of Anony: its signature changes.
    # (Sanony's BP now balances the whole-release overlap of the literal adversary, SPEC 4,
    # which on this example happens to keep every term of release 1's bag.)
    assert "herpes" not in _bag_terms(anony[1])
    assert not _bag_terms(anony[0]) <= _bag_terms(anony[1])
    assert sanony[1].global_bag
    # Kanony: release 2's bag keeps herpes and every other term of release 1's bag.
    assert "herpes" in _bag_terms(kanony[1])
    assert _bag_terms(kanony[0]) <= _bag_terms(kanony[1])
    second = publications[1]
    # Bag counterfeits stand only for terms of release 1's bag that release 2 lacked.
    added = second.ledger.global_bag_counterfeits
    assert set(added) <= _bag_terms(kanony[0])
    assert all(k == 1 for k in added.values())
    assert second.release.global_counterfeits == sum(added.values())
    assert second.report["global_bag_counterfeits"] == sum(added.values())
    # The copies count in the published rates, fixed over the rows after FP1 (FP2's rows are
    # not counted, section 3.2.1), and every row of the series stays serially preserving.
    rows_after_fp1 = second.release.n_rows - sum(c.fp2 for c in second.ledger.clusters)
    assert second.release.population_rates == pytest.approx(
        {s: k / rows_after_fp1 for s, k in second.release.term_totals().items()}
    )
    assert violations(kanony, 2) == []


def test_an_absent_bag_term_gets_one_counterfeit_copy() -> None:
    # Table 5's bag {herpes, COVID-19}, Table 6's {COVID-19, diabetes}: herpes is put back.
    added = global_bag_counterfeits(
        {"COVID-19": 1, "diabetes": 1},
        {"COVID-19": 1, "diabetes": 1, "lung cancer": 2, "HIV": 1, "cancer": 1},
        {"herpes", "COVID-19"},
        2,
        {},
        seed=0,
    )
    assert added.copies == {"herpes": 1}
    assert added.padded == {} and added.shortfall == 0


def test_with_nothing_to_protect_kanony_publishes_what_sanony_publishes() -> None:
    # Sanony's running example never loses a bag term; no taxonomy, no padding.
    corpora = [sanony_corpus(1), sanony_corpus(2), sanony_corpus(3)]
    raw = {"r_th": 2, "cluster_size": 2, "seed": 7}
    sanony, _ = _publish("sanony", corpora, SANONY_PRIVATE, raw)
    kanony, publications = _publish("kanony", corpora, SANONY_PRIVATE, {**raw, "gb_min_terms": 0})
    assert kanony == sanony
    assert all(p.ledger.global_bag_counterfeits == {} for p in publications)


# -- gb_min_terms ----------------------------------------------------------------------------


def test_gb_min_terms_pads_with_terms_the_release_uses() -> None:
    releases, publications = _publish(
        "kanony",
        [sanony_corpus(1)],
        SANONY_PRIVATE,
        {"r_th": 2, "cluster_size": 2, "seed": 7, "gb_min_terms": 3},
    )
    first = publications[0]
    # Anony's bag is {herpes: 1}; HIV and cancer, used in the clusters, pad it to 3 terms.
    assert releases[0].global_bag == {"herpes": 1, "HIV": 1, "cancer": 1}
    assert first.ledger.global_bag_counterfeits == {"HIV": 1, "cancer": 1}
    assert releases[0].global_counterfeits == 2
    assert releases[0].population_rates == pytest.approx(
        {"HIV": 3 / 6, "cancer": 3 / 6, "herpes": 1 / 6}
    )
    assert violations(releases, 2) == []


def test_padding_is_seeded_weighted_and_reports_a_shortfall() -> None:
    used = {"a": 5, "b": 1, "c": 1}
    first = global_bag_counterfeits({}, used, set(), 2, {}, seed=3)
    assert first.copies == global_bag_counterfeits({}, used, set(), 2, {}, seed=3).copies
    assert len(first.padded) == 2
    # Earlier releases' terms come after the release's own; past them, a shortfall.
    short = global_bag_counterfeits({"a": 1}, {"a": 1}, set(), 4, {"z": 2}, seed=3)
    assert short.padded == {"z": 1}
    assert short.shortfall == 2


def test_gb_min_terms_zero_and_no_history_add_nothing() -> None:
    added = global_bag_counterfeits({"x": 2}, {"x": 2, "y": 1}, set(), 0, {}, seed=0)
    assert added.copies == {} and added.shortfall == 0


# -- gb_retention ----------------------------------------------------------------------------


def _release(no: int, bag: dict[str, int]) -> PublishedRelease:
    return PublishedRelease(no, [], bag, {})


def test_retention_counts_releases_from_the_last_true_copy() -> None:
    history = SeriesHistory(
        releases=[_release(1, {"herpes": 1, "flu": 2}), _release(2, {"herpes": 1, "flu": 1})],
        ledgers=[
            ReleaseLedger([]),
            ReleaseLedger([], global_bag_counterfeits={"herpes": 1}),
        ],
    )
    # Default: every term of every earlier bag.
    assert retained_terms(history, None) == {"herpes", "flu"}
    # herpes was a counterfeit only in release 2: kept one release after release 1, no more.
    assert retained_terms(history, 1) == {"flu"}
    assert retained_terms(history, 2) == {"herpes", "flu"}
    # Without a ledger every copy counts as true.
    assert retained_terms(SeriesHistory(releases=history.releases), 1) == {"herpes", "flu"}


def test_retention_one_drops_a_term_after_one_release() -> None:
    corpora = [sanony_corpus(1), sanony_corpus(2), sanony_corpus(3)]
    raw = {"r_th": 2, "cluster_size": 2, "seed": 7, "gb_min_terms": 0, "gb_retention": 1}
    releases, publications = _publish("kanony", corpora, SANONY_PRIVATE, raw)
    assert "herpes" in _bag_terms(releases[1])
    assert "herpes" not in publications[2].ledger.global_bag_counterfeits
    assert violations(releases, 2) == []


# -- categorisation --------------------------------------------------------------------------


def test_categorisation_replaces_non_private_terms_before_clustering() -> None:
    corpora = [_prisoners(RELEASE_1), _prisoners(RELEASE_2)]
    # Categorised rows repeat more, so the paper's mode without alignment cannot publish
    # release 2 at r_th 2 (one row stays over, no suppression budget in 6 rows): align.
    raw = {"r_th": 2, "cluster_size": 2, "seed": 7, "taxonomy": TAXONOMY, "align": True}
    releases, publications = _publish("kanony", corpora, PRIVATE, raw)
    categories = set(TAXONOMY.values())
    for release in releases:
        terms = {t for c in release.clusters for row in c.rows for t in row}
        assert terms <= categories
        assert not terms & set(TAXONOMY)
    # Laura's {theft, arson, fraud} and Lucy's {theft, arson, smoking} are now told apart
    # only by category; private terms are untouched.
    first_rows = sorted(releases[0].clusters[0].rows)
    assert first_rows == [
        ("felony", "misdemeanor", "property crime"),
        ("felony", "property crime"),
    ]
    assert releases[0].clusters[0].private_counts == {"HIV": 1}
    assert publications[0].report["categorised_terms"] == 8
    assert violations(releases, 2) == []


def test_categorise_keeps_private_terms_and_refuses_private_categories() -> None:
    corpus = [Transaction.of({"smoking", "lung cancer"}, individual="p1")]
    out = categorise(corpus, {"smoking": "misdemeanor", "lung cancer": "x"}, PRIVATE)
    assert out == [Transaction.of({"misdemeanor", "lung cancer"}, individual="p1")]
    with pytest.raises(InvalidParameter, match="private term"):
        categorise(corpus, {"smoking": "lung cancer"}, PRIVATE)
    with pytest.raises(InvalidParameter, match="non-blank"):
        categorise(corpus, {"smoking": " "}, PRIVATE)


# -- property: Sanony's guarantee and the bag's invariants on random series -----------------


@st.composite
def kanony_cases(draw: st.DrawFn) -> tuple[SmallSeries, dict[str, object]]:
    series = draw(small_series())
    taxonomy = draw(
        st.dictionaries(st.sampled_from(PUBLIC_TERMS), st.sampled_from(["K1", "K2"]), max_size=4)
    )
    raw: dict[str, object] = {
        "r_th": series.r_th,
        "cluster_size": series.cluster_size,
        "seed": series.seed % 7,
        "taxonomy": taxonomy,
        "gb_min_terms": draw(st.integers(0, 3)),
        "gb_retention": draw(st.one_of(st.none(), st.integers(1, 2))),
    }
    return series, raw


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kanony_cases())
def test_after_kanony_every_row_is_serially_preserving_and_the_bag_is_invariant(
    case: tuple[SmallSeries, dict[str, object]],
) -> None:
    series, raw = case
    try:
        releases, publications = _publish("kanony", series.corpora, series.private_terms, raw)
    except PublicationFailed:
        # Allowed by SPEC 5 (the guard), exactly as for Sanony.
        assume(False)
    assert violations(releases, series.r_th) == []
    retention, min_terms = raw["gb_retention"], raw["gb_min_terms"]
    assert (retention is None or isinstance(retention, int)) and isinstance(min_terms, int)
    seen: set[str] = set()
    for k, (release, publication) in enumerate(zip(releases, publications, strict=True)):
        history = SeriesHistory(releases[:k], [p.ledger for p in publications[:k]])
        assert retained_terms(history, retention) <= _bag_terms(release)
        seen |= set(release.term_totals())
        assert len(_bag_terms(release)) >= min(min_terms, len(seen))
        copies = publication.ledger.global_bag_counterfeits
        assert release.global_counterfeits == sum(copies.values())
        assert all(release.global_bag[s] >= k for s, k in copies.items())

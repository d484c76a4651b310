"""Inv, the m-invariance baseline (app.core.variants.inv; design.md §9, Sanony paper 4.3,
Example 2)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.errors import InvalidCorpus, PublicationFailed
from app.core.history import SeriesHistory
from app.core.model import Publication, Transaction, make_row
from app.core.params import PublishParams, parse_params
from app.core.pipeline import publish
from app.core.variants.inv import (
    NULL_VALUE,
    publish_inv,
    sensitive_value,
    signatures_of,
    signatures_update,
)
from app.io.corpora import find_corpus, missing
from tests.core.paper_example import CORPORA, PRIVATE

# Table 1 of the Sanony paper with its people as individuals (Table 3 is its 2-invariant form).
NAMES = [
    ["Laura", "Lucy", "Martin", "Shane", "John", "Stacy"],
    ["Lucy", "Ben", "Martin", "Shane", "Ivy"],
    ["Lucy", "Ben", "Jane", "Ivy", "Pam"],
]


def _table1(release: int) -> list[Transaction]:
    return [
        Transaction.of(terms, name)
        for name, (_, terms) in zip(NAMES[release - 1], CORPORA[release - 1], strict=True)
    ]


def _series(
    corpora: Sequence[Sequence[Transaction]], private: frozenset[str], params: PublishParams
) -> list[Publication]:
    history = SeriesHistory()
    publications = []
    for corpus in corpora:
        publication = publish("inv", history, corpus, private, params)
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
        history.signatures.update(signatures_update(publication))
        publications.append(publication)
    return publications


def _check_release(publication: Publication, corpus: Sequence[Transaction], m: int) -> None:
    """m-unique clusters, counterfeits counted, every true row published exactly once."""
    private = publication.release.private_terms
    expected = Counter((t.individual, make_row(t.terms - private)) for t in corpus)
    published: Counter[tuple[str | None, tuple[str, ...]]] = Counter()
    for cluster, book in zip(
        publication.release.clusters, publication.ledger.clusters, strict=True
    ):
        counts = cluster.private_counts
        assert len(counts) >= m and len(set(counts.values())) == 1, counts
        assert sum(counts.values()) == cluster.size
        fakes = [i for i, key in enumerate(book.individuals) if key is None]
        assert fakes == book.counterfeit_rows
        assert cluster.counterfeits == len(fakes) == book.bp + book.fp1 and book.fp2 == 0
        assert len(fakes) < cluster.size, "a cluster holds at least one true row"
        published.update(
            (key, row) for key, row in zip(book.individuals, cluster.rows, strict=True) if key
        )
        values = Counter(
            sensitive_value(t.terms & private)
            for t in corpus
            if t.individual in set(book.individuals)
        )
        assert all(counts.get(v, 0) >= n for v, n in values.items())
    assert published == expected
    total = publication.release.n_rows
    rates = publication.release.population_rates
    assert sum(rates.values()) == pytest.approx(1.0)
    assert publication.report["counterfeits"] == publication.ledger.counterfeit_rows
    assert publication.report["rows"] == total


def _check_invariance(publications: Sequence[Publication]) -> None:
    """Every individual has one signature over all the releases it appears in."""
    first: dict[str, frozenset[str]] = {}
    for publication in publications:
        found = signatures_of(publication.release, publication.ledger)
        assert found == signatures_update(publication)
        for key, signature in found.items():
            assert first.setdefault(key, signature) == signature, key


def test_sensitive_values_concatenate_private_sets_and_null_is_a_value() -> None:
    assert sensitive_value({"herpes", "HIV"}) == "HIV|herpes"
    assert sensitive_value(set()) == NULL_VALUE == ""
    assert sensitive_value({"a|b"}) == "a\\|b" != sensitive_value({"a", "b"})
    assert sensitive_value({"a\\", "b"}) != sensitive_value({"a\\|b"})


def test_table_1_is_published_2_invariant_with_its_counterfeits_counted() -> None:
    corpora = [_table1(r) for r in (1, 2, 3)]
    publications = _series(corpora, PRIVATE, parse_params("inv", {"cluster_size": 2}))
    for publication, corpus in zip(publications, corpora, strict=True):
        _check_release(publication, corpus, 2)
    _check_invariance(publications)
    first, second, third = publications
    # Year 1 is 2-eligible (2 NULL, 2 cancer, HIV, HIV|herpes): three pairs, no counterfeit.
    assert (first.release.n_rows, first.ledger.counterfeit_rows) == (6, 0)
    assert sorted(
        map(sorted, map(dict.keys, (c.private_counts for c in first.release.clusters)))
    ) == [["", "HIV"], ["", "cancer"], ["HIV|herpes", "cancer"]]
    # Year 2: Shane (cancer) keeps {HIV|herpes, cancer} although John left: one counterfeit
    # HIV|herpes (balancing). Ben and Ivy, new and NULL, are not 2-eligible with each other:
    # each gets a counterfeit (eligibility) where the paper's Table 3b suppresses them.
    assert second.report["counterfeits_by_phase"] == {"balancing": 1, "eligibility": 2}
    assert signatures_update(second)["Shane"] == frozenset({"HIV|herpes", "cancer"})
    assert signatures_update(second)["Lucy"] == signatures_update(first)["Lucy"]
    # Year 3: Lucy, Ben and Ivy keep theirs; Jane (HIV) and Pam (cancer) are new.
    assert {k: signatures_update(third)[k] for k in ("Lucy", "Ben", "Ivy")} == {
        k: signatures_update(second)[k] for k in ("Lucy", "Ben", "Ivy")
    }
    assert sum(c.counterfeits for c in third.release.clusters) == third.ledger.counterfeit_rows


def test_the_public_view_is_anatomy_style() -> None:
    publication = _series([_table1(1)], PRIVATE, parse_params("inv", {}))[0]
    release = publication.release
    assert release.global_bag == {} and all(not c.global_share for c in release.clusters)
    assert release.population_rates == {
        "": 2 / 6,
        "HIV": 1 / 6,
        "HIV|herpes": 1 / 6,
        "cancer": 2 / 6,
    }
    assert all(not set(row) & PRIVATE for c in release.clusters for row in c.rows)


def test_a_persisting_individual_whose_value_left_its_signature_is_suppressed() -> None:
    params = parse_params("inv", {"cluster_size": 2})
    one = [Transaction.of({"a", "HIV"}, "p1"), Transaction.of({"b"}, "p2")]
    two = [Transaction.of({"a", "cancer"}, "p1"), Transaction.of({"b"}, "p2")]
    first, second = _series([one, two], frozenset({"HIV", "cancer"}), params)
    assert second.ledger.suppressed == {"cancer": 1}
    assert second.report["suppressed"] == 1 and "p1" not in signatures_update(second)
    assert signatures_update(second)["p2"] == signatures_update(first)["p2"]
    assert second.release.clusters[0].private_counts == {"": 1, "HIV": 1}
    assert second.release.clusters[0].counterfeits == 1


def test_a_corpus_without_m_values_borrows_private_terms_or_fails() -> None:
    corpus = [Transaction.of({"a"}, "p1"), Transaction.of({"b"}, "p2")]
    publication = publish("inv", SeriesHistory(), corpus, frozenset({"HIV"}), PublishParams())
    assert {v for c in publication.release.clusters for v in c.private_counts} == {"", "HIV"}
    assert publication.ledger.counterfeit_rows == 2
    with pytest.raises(PublicationFailed):
        publish("inv", SeriesHistory(), corpus, frozenset(), PublishParams())
    with pytest.raises(PublicationFailed):
        publish("inv", SeriesHistory(), corpus, frozenset({"HIV"}), PublishParams(m=3))


def test_individuals_are_required_and_unique() -> None:
    params = PublishParams()
    with pytest.raises(InvalidCorpus):
        publish("inv", SeriesHistory(), [Transaction.of({"a"})], frozenset(), params)
    twice = [Transaction.of({"a"}, "p1"), Transaction.of({"b", "HIV"}, "p1")]
    with pytest.raises(InvalidCorpus, match="individual also on transaction 0"):
        publish_inv(SeriesHistory(), twice, frozenset({"HIV"}), params)


def test_a_seed_fixes_the_publication() -> None:
    corpora = [_table1(r) for r in (1, 2, 3)]
    params = parse_params("inv", {"cluster_size": 2, "seed": 5})
    runs = [_series(corpora, PRIVATE, params) for _ in range(2)]
    for a, b in zip(*runs, strict=True):
        assert a.release == b.release and a.ledger == b.ledger
        assert signatures_update(a) == signatures_update(b)


# --- random small series: people persist, leave, come back and join --------------------


def _people_series(seed: int, releases: int, size: int, n_private: int) -> list[list[Transaction]]:
    """A pool of people with fixed records; each release keeps some, brings back some who
    left and adds new ones."""
    rng = random.Random(seed)
    public = ["a", "b", "c", "d", "e"]
    private = [f"s{i}" for i in range(n_private)]

    def record() -> frozenset[str]:
        terms = set(rng.sample(public, rng.randint(0, 3)))
        if rng.random() < 0.4:
            terms.update(rng.sample(private, rng.randint(1, min(2, n_private))))
        return frozenset(terms or {rng.choice(public)})

    people: dict[str, frozenset[str]] = {}
    current: list[str] = []
    corpora = []
    for _ in range(releases):
        kept = [p for p in current if rng.random() < 0.6]
        gone = [p for p in people if p not in current]
        back = [p for p in gone if rng.random() < 0.3]
        fresh = [f"p{len(people) + i}" for i in range(max(size - len(kept) - len(back), 1))]
        for person in fresh:
            people[person] = record()
        current = kept + back + fresh
        corpora.append([Transaction(people[p], p) for p in current])
    return corpora


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32),
    releases=st.integers(2, 5),
    size=st.integers(1, 40),
    n_private=st.integers(1, 4),
    m=st.integers(2, 3),
    cluster_size=st.integers(1, 8),
)
def test_random_series_are_m_invariant_and_publish_every_true_row_once(
    seed: int, releases: int, size: int, n_private: int, m: int, cluster_size: int
) -> None:
    corpora = _people_series(seed, releases, size, n_private)
    private = frozenset(f"s{i}" for i in range(n_private))
    params = parse_params("inv", {"m": m, "cluster_size": cluster_size, "seed": seed % 11})
    if n_private + 1 < m:  # fewer sensitive values than m exist at all
        with pytest.raises(PublicationFailed):
            _series(corpora, private, params)
        return
    publications = _series(corpora, private, params)
    for publication, corpus in zip(publications, corpora, strict=True):
        assert publication.ledger.suppressed == {}
        _check_release(publication, corpus, m)
    _check_invariance(publications)


# --- measurement: counterfeit rates of Inv and Sanony on SeGen series (design.md §10, Fig. 7a) --


@pytest.mark.slow
@pytest.mark.parametrize("name", ["bms-webview-1.dat", "bms-webview-2.dat"])
def test_inv_needs_more_counterfeits_than_sanony_on_segen_series(name: str) -> None:
    """sz 5%, rep 40%, 5 releases, 10% private terms; Sanony at r_th 8. Prints both rates."""
    from app.core.segen import choose_private_terms, segen
    from app.io.corpus import read_corpus

    path = find_corpus(name)
    if path is None:
        pytest.skip(missing(name))
    corpus = read_corpus(path)
    private = choose_private_terms([t for tr in corpus for t in tr.terms], 0.1, seed=1)
    series = segen(len(corpus), round(0.05 * len(corpus)), 5, 0.4, seed=1)
    corpora = [[Transaction(corpus[p].terms, f"p{p}") for p in positions] for positions in series]
    rates = {}
    for method, raw in (("inv", {"m": 2, "seed": 1}), ("sanony", {"r_th": 8, "seed": 1})):
        history, counterfeits, rows = SeriesHistory(), 0, 0
        for snapshot in corpora:
            publication = publish(method, history, snapshot, private, parse_params(method, raw))
            history.releases.append(publication.release)
            history.ledgers.append(publication.ledger)
            history.signatures.update(signatures_update(publication))
            counterfeits += publication.ledger.counterfeit_rows
            rows += publication.release.n_rows
        rates[method] = counterfeits / rows
    print(f"\n{name}: counterfeit rate Inv {rates['inv']:.2%}, Sanony {rates['sanony']:.2%}")
    assert rates["inv"] > rates["sanony"]

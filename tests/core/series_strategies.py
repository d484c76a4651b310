"""Random small serial corpora for property tests: deletions and insertions between releases."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

from hypothesis import strategies as st

from app.core.errors import PublicationFailed
from app.core.history import SeriesHistory
from app.core.model import PublishedRelease, Transaction
from app.core.params import PublishParams
from app.core.pipeline import publish
from tests.core.paper_mode import parse_params

PUBLIC_TERMS = ("a", "b", "c", "d", "e", "f", "g", "h")

#: A non-private set no release of a drawn series holds (their terms are ``PUBLIC_TERMS``).
FRESH = ("zz-fresh",)


@dataclass(frozen=True)
class SmallSeries:
    corpora: list[list[Transaction]]
    private_terms: frozenset[str]
    r_th: float
    cluster_size: int
    seed: int


def anony_releases(series: SmallSeries) -> list[PublishedRelease]:
    """Every release of ``series`` published with Anony: clusters with copies and overlaps,
    no counterfeit and no repair."""
    params = parse_params("anony", {"r_th": series.r_th, "cluster_size": series.cluster_size})
    history = SeriesHistory()
    for corpus in series.corpora:
        publication = publish("anony", history, corpus, series.private_terms, params)
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
    return history.releases


def publish_each(
    method: str, series: SmallSeries, params: PublishParams
) -> Iterator[SeriesHistory]:
    """Publish the releases of ``series`` one after the other with ``method``, yielding the
    history after each publication; a refused release is left out (nothing stored), as the
    service does."""
    history = SeriesHistory()
    for corpus in series.corpora:
        try:
            publication = publish(method, history, corpus, series.private_terms, params)
        except PublicationFailed:
            continue
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
        yield history


def _transaction(rng: random.Random, public: list[str], private: list[str]) -> Transaction:
    terms = set(rng.sample(public, rng.randint(0, min(3, len(public)))))
    if rng.random() < 0.45:
        terms.update(rng.sample(private, rng.randint(1, min(2, len(private)))))
    if not terms:
        terms.add(rng.choice(public))
    return Transaction(frozenset(terms))


def build_series(
    seed: int,
    releases: int,
    sizes: list[int],
    n_private: int,
    n_public: int,
    r_th: float,
    cluster_size: int,
) -> SmallSeries:
    """A series whose release i+1 keeps a random part of release i and adds new records."""
    rng = random.Random(seed)
    public = list(PUBLIC_TERMS[:n_public])
    private = [f"s{i}" for i in range(n_private)]
    current = [_transaction(rng, public, private) for _ in range(sizes[0])]
    corpora = [current]
    for size in sizes[1:releases]:
        kept = [t for t in current if rng.random() < 0.6]
        fresh = [_transaction(rng, public, private) for _ in range(max(size - len(kept), 0))]
        current = (kept + fresh) or [_transaction(rng, public, private)]
        corpora.append(current)
    return SmallSeries(corpora, frozenset(private), r_th, cluster_size, seed)


@st.composite
def small_series(draw: st.DrawFn) -> SmallSeries:
    """3 to 5 releases of 5 to 60 transactions, 1 to 4 private terms, r_th in [1.5, 8]."""
    releases = draw(st.integers(3, 5))
    return build_series(
        seed=draw(st.integers(0, 2**32)),
        releases=releases,
        sizes=draw(st.lists(st.integers(5, 60), min_size=releases, max_size=releases)),
        n_private=draw(st.integers(1, 4)),
        n_public=draw(st.integers(3, 8)),
        r_th=draw(st.floats(1.5, 8, allow_nan=False)),
        cluster_size=draw(st.integers(2, 6)),
    )


# The hard cases of the soundness properties (test_soundness_properties), shared with the
# escalation, Kanony, API and benchmark tests: a helper module, not a test module to import.

NEW, BACK = "s_new", "s_back"


def inject_hard_cases(series: SmallSeries, seed: int, popular_share: float) -> SmallSeries:
    """Add the hard cases to each release of ``series`` (in place of nothing: rows are added)."""
    rng = random.Random(seed)
    private = sorted(series.private_terms)
    corpora: list[list[Transaction]] = []
    for number, corpus in enumerate(series.corpora, start=1):
        extra: list[Transaction] = []
        for _ in range(max(2, round(popular_share * len(corpus)))):
            terms = {"a"}
            if rng.random() < 0.4:
                terms.add(rng.choice(private))
            extra.append(Transaction(frozenset(terms)))
        for _ in range(rng.randint(1, 3)):  # private terms only
            extra.append(Transaction(frozenset(rng.sample(private, 1))))
        if number >= 2:  # a term new to release 2, then kept
            extra.append(Transaction(frozenset({NEW, rng.choice("bcd")})))
        if number != 2:  # present in release 1, gone from 2, back from 3
            extra.append(Transaction(frozenset({BACK, rng.choice("bcd")})))
        corpora.append(corpus + extra)
    terms = series.private_terms | {NEW, BACK}
    return SmallSeries(corpora, terms, series.r_th, series.cluster_size, series.seed)


@st.composite
def hard_series(draw: st.DrawFn) -> SmallSeries:
    releases = draw(st.integers(3, 5))
    base = build_series(
        seed=draw(st.integers(0, 2**32)),
        releases=releases,
        sizes=draw(st.lists(st.integers(8, 50), min_size=releases, max_size=releases)),
        n_private=draw(st.integers(1, 3)),
        n_public=draw(st.integers(3, 8)),
        r_th=draw(st.floats(1.5, 8, allow_nan=False)),
        cluster_size=draw(st.integers(2, 6)),
    )
    return inject_hard_cases(base, draw(st.integers(0, 2**16)), draw(st.floats(0.2, 0.5)))


def fixed_hard_series(trial: int) -> tuple[SmallSeries, random.Random]:
    """Hard series ``trial`` (fixed, unlike :func:`hard_series`'s draws), and its random
    stream after the draws, for a caller's further parameters (Kanony's bag)."""
    rng = random.Random(trial)
    releases = rng.randint(3, 5)
    base = build_series(
        seed=trial,
        releases=releases,
        sizes=[rng.randint(8, 50) for _ in range(releases)],
        n_private=rng.randint(1, 3),
        n_public=rng.randint(3, 8),
        r_th=rng.uniform(1.5, 8),
        cluster_size=rng.randint(2, 6),
    )
    return inject_hard_cases(base, trial, rng.uniform(0.2, 0.5)), rng


def rising_term_series() -> tuple[list[list[Transaction]], frozenset[str]]:
    """Two releases of 40 rows sharing 30 individuals; ``X`` rises from one copy (on a shared
    row) to three: release 1 caps the overlap's copies of X at 1, so the two copies on fresh
    rows of release 2 lift its rows outside the overlap (about (3 - 1)/10 against a rate of
    3/40) over r_th = 2 by the global composition (section 2.3.2)."""
    vocabulary = [f"t{i}" for i in range(30)]

    def row(i: int) -> frozenset[str]:
        return frozenset(random.Random(i).sample(vocabulary, 2))

    def terms(i: int, x: set[int]) -> frozenset[str]:
        return row(i) | ({"HIV"} if i % 5 == 0 else set()) | ({"X"} if i in x else set())

    first = [Transaction(terms(i, {35}), f"p{i}") for i in range(40)]
    second = [Transaction(terms(i, {35, 42, 44}), f"p{i}") for i in range(10, 50)]
    return [first, second], frozenset({"HIV", "X"})

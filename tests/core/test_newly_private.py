"""A term made private by a later release is printed in no row of it or of any later one.

Private terms may grow with a release (design.md §1, docs/api.md ``private_terms``).
Earlier releases published the term in clear, and Sanony's counterfeit rows (BP, FP2, the
repair, Kanony's through Sanony) drew their terms from those rows: 13 rows over 15 small series
printed the newly private term, often as a counterfeit ``['X']``. Here random small series hold
``X`` in clear (and a spelling ``x`` that folds onto it) until a random release makes ``X``
private; no row of that release or of a later one may hold either, for every method that
publishes rows. Disassociation is left out: it protects every term alike (k^m-anonymity knows
no private terms, design.md §11) and publishes each one in its chunks.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.errors import PublicationFailed
from app.core.history import SeriesHistory
from app.core.model import PublishedRelease, Transaction
from app.core.pipeline import publish
from app.core.spelling import fold
from app.core.variants.inv import signatures_update
from app.core.variants.wong import statistics_update
from app.methods.registry import get_method

NEW = "X"
SPELLING = "x"  # another spelling of X, in clear before X is private
METHODS = ("anony", "sanony", "kanony", "scomp", "inv", "wong")
PUBLIC = ("a", "b", "c", "d", "e")


@dataclass(frozen=True)
class GrowingSeries:
    corpora: list[list[Transaction]]
    private: list[frozenset[str]]  # per release: the private terms as of that release
    becomes: int  # the first release (1-based) where X is private
    r_th: float
    cluster_size: int
    seed: int


def _transaction(rng: random.Random, base: Sequence[str], clear: bool, who: str) -> Transaction:
    terms = set(rng.sample(PUBLIC, rng.randint(0, 2)))
    if rng.random() < 0.35:
        terms.add(NEW)
    if clear and rng.random() < 0.15:
        # Once X is private the service spells every ``x`` as X (casefold); before, it is a
        # public term of its own that the rows print.
        terms.add(SPELLING)
    if rng.random() < 0.3:
        terms.add(rng.choice(base))
    if not terms:
        terms.add(rng.choice(PUBLIC))
    return Transaction(frozenset(terms), who)


@st.composite
def growing_series(draw: st.DrawFn) -> GrowingSeries:
    """2 to 4 releases of 1 to 14 transactions (some kept from one release to the next, with
    their pseudonyms); one or two private terms from the start; X private from a later one."""
    releases = draw(st.integers(2, 4))
    becomes = draw(st.integers(2, releases))
    seed = draw(st.integers(0, 2**32))
    rng = random.Random(seed)
    base = ["H", "K"][: draw(st.integers(1, 2))]
    corpora: list[list[Transaction]] = []
    current: list[Transaction] = []
    fresh = 0
    for number in range(1, releases + 1):
        clear = number < becomes
        kept = [t for t in current if rng.random() < 0.6]
        if not clear:  # the spelling is X itself once X is private
            kept = [
                Transaction(frozenset(NEW if t == SPELLING else t for t in tr.terms), tr.individual)
                for tr in kept
            ]
        size = draw(st.integers(1, 14))
        while len(kept) < size:
            fresh += 1
            kept.append(_transaction(rng, base, clear, f"p{fresh}"))
        current = kept
        corpora.append(current)
    private = [
        frozenset(base) | ({NEW} if number >= becomes else frozenset())
        for number in range(1, releases + 1)
    ]
    return GrowingSeries(
        corpora,
        private,
        becomes,
        draw(st.sampled_from([2.0, 4.0, 8.0])),
        draw(st.sampled_from([1, 2, 10])),
        seed % 7,
    )


def _publish(method: str, series: GrowingSeries) -> list[PublishedRelease]:
    """The releases published before the method refused one (design.md §5's guard), if it did."""
    declared = get_method(method)
    raw = {"r_th": series.r_th, "cluster_size": series.cluster_size, "seed": series.seed}
    params = declared.parse({k: v for k, v in raw.items() if k in declared.parameters})
    history = SeriesHistory()
    for corpus, private in zip(series.corpora, series.private, strict=True):
        try:
            publication = publish(method, history, corpus, private, params)
        except PublicationFailed:
            break
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
        history.signatures.update(signatures_update(publication))
        for key, terms in statistics_update(publication).items():
            for term, entry in terms.items():
                history.statistics.setdefault(key, {}).setdefault(term, []).append(entry)
    return history.releases


def _printed(
    releases: Sequence[PublishedRelease], start: int
) -> list[tuple[int, str, tuple[str, ...]]]:
    """Rows of release ``start`` (1-based) and later that hold X in any spelling."""
    found = []
    for release in releases[start - 1 :]:
        for cluster in release.clusters:
            for row in cluster.rows:
                if any(fold(t) == fold(NEW) for t in row):
                    found.append((release.release_no, cluster.cluster_id, row))
    return found


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(growing_series())
def test_a_newly_private_term_is_in_no_row_of_that_release_or_later(
    series: GrowingSeries,
) -> None:
    for method in METHODS:
        releases = _publish(method, series)
        assert _printed(releases, series.becomes) == [], method


def _reviewer_series(seed: int, cluster_size: int) -> GrowingSeries:
    """Series like the reviewer's: 2-4 releases of 3-15 rows over five public terms, X and H
    each on about 30% of the rows, X private from a random later release; r_th 2."""
    rng = random.Random(seed)
    corpora: list[list[Transaction]] = []
    for number in range(rng.randint(2, 4)):
        corpus = []
        for i in range(rng.randint(3, 15)):
            terms = set(rng.sample(PUBLIC, rng.randint(1, 2)))
            terms |= {t for t in (NEW, "H") if rng.random() < 0.3}
            corpus.append(Transaction(frozenset(terms), f"r{number}-{i}"))
        corpora.append(corpus)
    becomes = rng.randint(2, len(corpora))
    private = [
        frozenset({"H"}) | ({NEW} if number >= becomes else frozenset())
        for number in range(1, len(corpora) + 1)
    ]
    return GrowingSeries(corpora, private, becomes, 2.0, cluster_size, 3)


def test_the_reviewer_series_no_longer_print_the_term() -> None:
    """Five such series at cluster sizes 1, 2 and 10: before, Sanony and Kanony each printed
    X in 5 rows of them after it became private (counterfeits ``['X', 'a']``, ``['X', 'c']``
    drawn from the earlier releases' rows); now none."""
    for seed in range(5):
        for cluster_size in (1, 2, 10):
            series = _reviewer_series(seed, cluster_size)
            for method in ("sanony", "kanony"):
                printed = _printed(_publish(method, series), series.becomes)
                assert printed == [], (method, seed, cluster_size)

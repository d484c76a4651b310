"""On random small series published by the real pipeline: the term-count interval holds the
true count of every private term, the support interval the true support of every (public,
private) pair, and reconstruction places every published copy."""

from __future__ import annotations

from collections import Counter
from itertools import product
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from app.analysis.estimates import itemset_support, term_count
from app.analysis.reader import Release, parse_release
from app.analysis.reconstruct import reconstruct
from app.core.errors import PublicationFailed
from app.core.history import SeriesHistory
from app.core.model import ReleaseLedger, Transaction
from app.core.params import parse_params
from app.core.pipeline import publish
from app.io.public import release_document
from app.methods.registry import get_method
from tests.core.series_strategies import PUBLIC_TERMS, SmallSeries, small_series

Published = list[tuple[dict[str, Any], ReleaseLedger, list[Transaction]]]


def _publish(series: SmallSeries, method: str = "sanony") -> Published:
    """Publish ``series``; ``sanony-paper`` is Sanony under the paper's guarantee."""
    raw: dict[str, Any] = {
        "r_th": series.r_th,
        "cluster_size": series.cluster_size,
        "seed": series.seed,
    }
    if method == "sanony-paper":
        method, raw["guarantee"] = "sanony", "paper"
    params = parse_params(method, raw)
    echo = get_method(method).echo(params)
    history = SeriesHistory()
    out: Published = []
    for corpus in series.corpora:
        publication = publish(method, history, corpus, series.private_terms, params)
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
        document = release_document(publication.release, "prop", method, echo)
        out.append((document, publication.ledger, list(corpus)))
    return out


def _releases(published: Published, complete: bool) -> list[Release]:
    """The releases as an analyst reads them; ``complete`` adds the release-level count of
    counterfeit rows (what the ledger knows, the field a release may publish)."""
    releases: list[Release] = []
    earlier = 0
    for document, ledger, _ in published:
        doc = dict(document)
        if complete:
            doc["counterfeit_rows"] = ledger.counterfeit_rows
        release = parse_release(doc)
        from dataclasses import replace

        release = replace(release, earlier_private_copies=earlier)
        earlier += release.private_copies()
        releases.append(release)
    return releases


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_series(), st.sampled_from(["sanony", "sanony-paper", "anony", "kanony", "scomp"]))
def test_the_count_interval_holds_the_true_count(series: SmallSeries, method: str) -> None:
    try:
        published = _publish(series, method)
    except PublicationFailed:
        assume(False)
    for release, (_, ledger, corpus) in zip(
        _releases(published, complete=True), published, strict=True
    ):
        truth = Counter(t for tr in corpus for t in tr.terms if t in series.private_terms)
        assert release.n_rows - ledger.counterfeit_rows == len(corpus)
        for s in series.private_terms | set(release.private_terms):
            estimate = term_count(release, s)
            assert estimate.counterfeits_complete
            assert estimate.contains(truth[s]), (s, truth[s], estimate)
        # a public term's support: read off the rows, less at most the counterfeit rows
        for t in ("a", "b"):
            true_support = sum(1 for tr in corpus if t in tr.terms)
            assert itemset_support(release, [t]).contains(true_support)
        # a pair's: the counts' bounds, wherever the mechanism moved the copies
        for t, s in product(PUBLIC_TERMS, series.private_terms):
            together = sum(1 for tr in corpus if {t, s} <= tr.terms)
            assert itemset_support(release, [t], s).contains(together), (t, s, together)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_series(), st.integers(0, 2**16))
def test_reconstruction_places_every_published_copy(series: SmallSeries, seed: int) -> None:
    try:
        published = _publish(series)
    except PublicationFailed:
        assume(False)
    for release in _releases(published, complete=False):
        baskets = reconstruct(release, seed)
        assert len(baskets) == release.n_rows
        start = 0
        for cluster in release.clusters:
            mine = baskets[start : start + cluster.size]
            start += cluster.size
            held = Counter(t for b in mine for t in b if t in series.private_terms)
            assert all(held[s] >= cluster.n_s(s) for s in cluster.private_term_names())
            assert [tuple(t for t in b if t not in series.private_terms) for b in mine] == list(
                cluster.rows
            )
            assert all(len(set(b)) == len(b) for b in mine)
        held = Counter(t for b in baskets for t in b if t in series.private_terms)
        for s in release.private_terms:
            placed = sum(c.n_s(s) for c in release.clusters)
            expected = min(max(placed, release.published_copies(s)), release.n_rows)
            assert held[s] == expected
        assert baskets == reconstruct(release, seed)

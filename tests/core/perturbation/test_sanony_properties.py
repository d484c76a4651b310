"""Sanony's guarantee on random small series, judged by the exact oracle of design.md §4."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from app.core.errors import PublicationFailed
from app.core.history import SeriesHistory
from app.core.model import PublishedRelease
from app.core.pipeline import publish
from tests.core.paper_mode import parse_params
from tests.core.series_strategies import SmallSeries, build_series, small_series
from tests.oracle.serial_risk import violations


def _publish(series: SmallSeries, method: str, **extra: object) -> list[PublishedRelease]:
    """Publish the whole series (``extra``: more parameters); :class:`PublicationFailed`
    propagates (nothing published)."""
    base = {"r_th": series.r_th, "cluster_size": series.cluster_size, "seed": series.seed % 7}
    params = parse_params(method, {**base, **extra})
    history = SeriesHistory()
    for corpus in series.corpora:
        publication = publish(method, history, corpus, series.private_terms, params)
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
    return history.releases


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_series())
def test_after_sanony_every_row_of_every_release_is_serially_preserving(
    series: SmallSeries,
) -> None:
    try:
        releases = _publish(series, "sanony")
    except PublicationFailed:
        # Allowed by design.md §5 (the guard), and rare: see the share test below.
        assume(False)
    assert violations(releases, series.r_th) == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_series(), st.floats(0, 1))
def test_a_lower_anony_threshold_keeps_the_guarantee(series: SmallSeries, share: float) -> None:
    anony_r_th = 1 + share * (series.r_th - 1)
    params = parse_params(
        "sanony",
        {"r_th": series.r_th, "anony_r_th": anony_r_th, "cluster_size": series.cluster_size},
    )
    history = SeriesHistory()
    try:
        for corpus in series.corpora:
            publication = publish("sanony", history, corpus, series.private_terms, params)
            history.releases.append(publication.release)
            history.ledgers.append(publication.ledger)
    except PublicationFailed:
        assume(False)
    assert violations(history.releases, series.r_th) == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_series())
def test_sanony_publishes_every_true_row_and_counts_its_counterfeits(series: SmallSeries) -> None:
    params = parse_params("sanony", {"r_th": series.r_th, "cluster_size": series.cluster_size})
    history = SeriesHistory()
    for corpus in series.corpora:
        try:
            publication = publish("sanony", history, corpus, series.private_terms, params)
        except PublicationFailed:
            assume(False)
        release, ledger = publication.release, publication.ledger
        true_rows = sorted(tuple(sorted(t.terms - series.private_terms)) for t in corpus)
        published_true = sorted(
            row
            for cluster, book in zip(release.clusters, ledger.clusters, strict=True)
            for i, row in enumerate(cluster.rows)
            if i not in set(book.counterfeit_rows)
        )
        assert published_true == true_rows
        for cluster, book in zip(release.clusters, ledger.clusters, strict=True):
            # A cluster publishes BP + FP1's rows (design.md §3); every counterfeit row,
            # FP2's and the repair's included, is counted in the release's total.
            assert cluster.counterfeits == book.bp + book.fp1
            assert len(book.counterfeit_rows) == book.bp + book.fp1 + book.fp2
        assert release.counterfeit_rows == ledger.counterfeit_rows
        history.releases.append(release)
        history.ledgers.append(ledger)


def _random_series(trial: int) -> SmallSeries:
    rng = random.Random(trial)
    releases = rng.randint(3, 5)
    return build_series(
        seed=trial,
        releases=releases,
        sizes=[rng.randint(5, 60) for _ in range(releases)],
        n_private=rng.randint(1, 4),
        n_public=rng.randint(3, 8),
        r_th=rng.uniform(1.5, 8),
        cluster_size=rng.randint(2, 6),
    )


def test_anony_alone_leaves_rows_at_risk_where_sanony_does_not() -> None:
    trials, at_risk, failed = 60, 0, 0
    for trial in range(trials):
        series = _random_series(trial)
        if violations(_publish(series, "anony"), series.r_th):
            at_risk += 1
        try:
            assert violations(_publish(series, "sanony"), series.r_th) == []
        except PublicationFailed as error:
            failed += 1
            assert error.details["rows_over_threshold"] > 0
    # The risk exists: Anony alone leaves rows over r_th in a real share of series ...
    assert at_risk >= trials // 4, f"only {at_risk} of {trials} series were at risk"
    # ... and Sanony's guard (a clean failure, nothing published) is the rare exception.
    assert failed <= trials // 20, f"{failed} of {trials} publications failed"


def _series_with(series: SmallSeries, counts: str) -> list[PublishedRelease] | None:
    try:
        return _publish(series, "sanony", counterfeit_counts=counts)
    except PublicationFailed:
        return None


@pytest.mark.parametrize("counts", ["release", "paper"])
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(series=small_series())
def test_every_way_of_counting_publishes_the_same_release(counts: str, series: SmallSeries) -> None:
    by_cluster = _series_with(series, "cluster")
    other = _series_with(series, counts)
    assume(by_cluster is not None)
    # Only what is counted in public changes (FP1 is off): the same rows, copies, bag and
    # rates. "release": every cluster publishes 0, the totals stay; "paper": the clusters'
    # counts stay, no total (FP2's and the repair's rows in no public figure).
    assert other is not None
    for a, b in zip(by_cluster, other, strict=True):
        assert (a.global_bag, a.population_rates) == (b.global_bag, b.population_rates)
        assert a.counterfeit_rows is not None
        assert b.counterfeit_rows == (a.counterfeit_rows if counts == "release" else None)
        for ca, cb in zip(a.clusters, b.clusters, strict=True):
            assert (ca.rows, ca.private_counts, ca.global_share) == (
                cb.rows,
                cb.private_counts,
                cb.global_share,
            )
            assert cb.counterfeits == (0 if counts == "release" else ca.counterfeits)
    assert violations(other, series.r_th) == []

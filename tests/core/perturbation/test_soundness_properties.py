"""Sound against the paper's adversary: the cases that broke the literal model.

Random small series with, in every release, a popular non-private set held by many rows,
transactions holding private terms only (the empty non-private set), a private term new to a
later release, and a term that vanishes and returns. After *every* publication the exact
oracle (``tests/oracle``, design.md §4 as written) must find no row of any release over ``r_th``.
"""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import HealthCheck, assume, given, settings

from app.core.errors import PublicationFailed
from app.core.history import SeriesHistory
from app.core.model import Publication, Transaction
from app.core.perturbation.sanony import suppression_history
from app.core.pipeline import publish
from tests.core.paper_mode import parse_params
from tests.core.series_strategies import (
    SmallSeries,
    fixed_hard_series,
    hard_series,
    rising_term_series,
)
from tests.oracle.serial_risk import violations


def _publish_checked(method: str, series: SmallSeries, extra: dict[str, object]) -> int:
    """Publish release after release, judging the whole series after each; returns releases.

    The suppressed copies are checked against the budget: a share of the release's copies
    (``suppression_scope = "release"``), or by default the larger of that and the share of the
    series' copies so far less what earlier releases suppressed. A release's copies are counted as
    published plus suppressed, an upper bound of what the publisher counts (its copies before the
    repair, BP's s-counterfeit copies included; the repair may add copies after)."""
    raw = {"r_th": series.r_th, "cluster_size": series.cluster_size, "seed": series.seed % 7}
    params = parse_params(method, {**raw, **extra})
    history = SeriesHistory()
    before = used = 0
    for corpus in series.corpora:
        publication = publish(method, history, corpus, series.private_terms, params)
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
        assert violations(history.releases, series.r_th) == []
        suppressed = sum(publication.ledger.suppressed.values())
        # Copies the escalation took past the budget (on_infeasible = "escalate")
        # are reported apart; the others keep to the budget.
        escalation = publication.report.get("escalation", {})
        within = suppressed - sum(escalation.get("suppressed_beyond_budget", {}).values())
        release = publication.release
        copies = (
            suppressed
            + sum(release.global_bag.values())
            + sum(sum(c.private_counts.values()) for c in release.clusters)
        )
        own = params.max_suppression * copies
        if params.suppression_scope == "series":
            share = math.floor(params.max_suppression * (copies + before) + 1e-9) - used
            assert within <= max(share, own, params.suppression_floor)
            before, used = before + copies, used + suppressed
        else:
            assert within <= max(own, params.suppression_floor)
    return len(history.releases)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hard_series())
def test_sanony_is_sound_after_every_publication(series: SmallSeries) -> None:
    try:
        _publish_checked("sanony", series, {})
    except PublicationFailed:
        assume(False)  # nothing published; how rare it is, see the share test below


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hard_series())
def test_sanony_is_sound_with_a_release_budget(series: SmallSeries) -> None:
    """The release's own budget changes how much may be suppressed, never what is judged."""
    try:
        _publish_checked("sanony", series, {"suppression_scope": "release"})
    except PublicationFailed:
        assume(False)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hard_series())
def test_kanony_is_sound_after_every_publication(series: SmallSeries) -> None:
    try:
        _publish_checked("kanony", series, {"gb_min_terms": 1})
    except PublicationFailed:
        assume(False)


def test_hard_series_never_leak_and_mostly_publish() -> None:
    """Over 40 fixed hard series, every publication is safe; failures (nothing stored) are
    counted. These releases hold 10-60 rows, so the default ``max_suppression`` of 1% allows
    no copy at all: 25% is given here (measured: 6 of 40 still fail, all with r_th under 3
    or a term returning to a release of a few dozen rows, where no budget is enough)."""
    failed = 0
    for trial in range(40):
        series, _ = fixed_hard_series(trial)
        try:
            _publish_checked("sanony", series, {"max_suppression": 0.25})
        except PublicationFailed:
            failed += 1
    assert failed <= 8, f"{failed} of 40 hard series failed to publish"


def _new_term_series() -> tuple[list[list[Transaction]], frozenset[str]]:
    """Two releases of 40 rows sharing 20 individuals; release 2 brings ``X``, a private term
    no earlier release holds, on two rows outside the overlap: the global composition lifts
    those rows by (N - n_X)/(N - n_X - o) = 38/18, over r_th = 1.6 whatever a counterfeit adds
    in one step (design.md §5.5, "The post-condition and suppression")."""
    vocabulary = [f"t{i}" for i in range(30)]

    def row(i: int) -> frozenset[str]:
        return frozenset(random.Random(i).sample(vocabulary, 2))

    def hiv(i: int) -> set[str]:
        return {"HIV"} if i % 5 == 0 else set()

    first = [Transaction(row(i) | hiv(i), f"p{i}") for i in range(40)]
    second = [
        Transaction(row(i) | hiv(i) | ({"X"} if i in (55, 57) else set()), f"p{i}")
        for i in range(20, 60)
    ]
    return [first, second], frozenset({"HIV", "X"})


def _publish_all(
    corpora: list[list[Transaction]], private: frozenset[str], extra: dict[str, object]
) -> Publication:
    """Sanony over ``corpora`` (r_th 1.6 unless ``extra`` says otherwise, clusters of 4), the
    series judged after the last release; returns the last publication."""
    params = parse_params("sanony", {"r_th": 1.6, "cluster_size": 4, "seed": 1, **extra})
    history = SeriesHistory()
    for corpus in corpora:
        publication = publish("sanony", history, corpus, private, params)
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
    assert violations(history.releases, params.r_th) == []
    return publication


def test_a_new_private_term_is_suppressed_at_once_within_the_floor() -> None:
    """A small release's 1% budget is 0 copies; the floor (3) lets the new term's copies go at
    once, and no counterfeit is spent on rows that counterfeits barely lower."""
    corpora, private = _new_term_series()
    publication = _publish_all(corpora, private, {})
    assert set(publication.ledger.suppressed) == {"X"}
    assert 1 <= publication.ledger.suppressed["X"] <= 2
    assert publication.report["counterfeits_by_phase"]["repair"] == 0


def test_without_a_suppression_budget_counterfeits_still_mend_the_new_term() -> None:
    corpora, private = _new_term_series()
    publication = _publish_all(corpora, private, {"max_suppression": 0.0, "suppression_floor": 0})
    assert publication.ledger.suppressed == {}
    assert publication.report["counterfeits_by_phase"]["repair"] > 0


def _publish_rising(extra: dict[str, object]) -> Publication:
    return _publish_all(*rising_term_series(), {"r_th": 2.0, **extra})


def test_a_rising_term_is_suppressed_at_once_not_diluted() -> None:
    """A global-composition lift of the new release is mended by suppression first: one copy
    of X, and no repair counterfeit (counterfeits first spent 5 rows here)."""
    publication = _publish_rising({})
    assert publication.ledger.suppressed == {"X": 1}
    assert publication.report["counterfeits_by_phase"]["repair"] == 0


def test_a_series_budget_lends_what_earlier_releases_left() -> None:
    """At 5% neither release alone may suppress a copy (about 10 private copies each), so the
    rising term is diluted with counterfeits; over the series (about 20 copies) one copy may
    go, and it does."""
    extra: dict[str, object] = {"max_suppression": 0.05, "suppression_floor": 0}
    alone = _publish_rising({**extra, "suppression_scope": "release"})
    assert alone.ledger.suppressed == {}
    assert alone.report["counterfeits_by_phase"]["repair"] > 0
    pooled = _publish_rising({**extra, "suppression_scope": "series"})
    assert pooled.ledger.suppressed == {"X": 1}
    assert pooled.report["counterfeits_by_phase"]["repair"] == 0


def test_the_series_budget_counts_published_and_suppressed_copies() -> None:
    corpora, private = rising_term_series()
    params = parse_params("sanony", {"r_th": 2.0, "cluster_size": 4, "seed": 1})
    history = SeriesHistory()
    publication = publish("sanony", history, corpora[0], private, params)
    history.releases.append(publication.release)
    history.ledgers.append(publication.ledger)
    copies = sum(len(t.terms & private) for t in corpora[0])
    assert suppression_history(history) == (copies, 0)
    publication.ledger.suppressed = {"X": 2}
    assert suppression_history(history) == (copies + 2, 2)
    history.ledgers.clear()  # a history without ledgers counts what is published
    assert suppression_history(history) == (copies, 0)


def test_kanony_still_suppresses_a_new_term_and_keeps_its_bag() -> None:
    """Kanony's invariant bag binds suppression (the bag's last copy of a retained or padded
    term stays), but a term new to the release is still suppressed at once."""
    corpora, private = _new_term_series()
    params = parse_params("kanony", {"r_th": 1.6, "cluster_size": 4, "seed": 1})
    history = SeriesHistory()
    for corpus in corpora:
        publication = publish("kanony", history, corpus, private, params)
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
    assert violations(history.releases, 1.6) == []
    assert set(publication.ledger.suppressed) == {"X"}
    assert set(history.releases[0].global_bag) <= set(publication.release.global_bag)
    assert publication.report["counterfeits_by_phase"]["repair"] == 0


@pytest.mark.parametrize(
    ("extra", "told"),
    [
        (
            {"max_suppression": 0.0, "suppression_floor": 0, "max_repair_rounds": 2},
            "a larger max_suppression",
        ),
        ({"r_th": 1.5, "max_repair_rounds": 1}, "more max_repair_rounds"),
    ],
)
def test_a_refusal_says_what_was_spent_and_what_may_publish(
    extra: dict[str, object], told: str
) -> None:
    """Nothing is stored, and the publisher reads the budget, what it spent, the rounds and
    which parameter to change: the budget once spent, else the round guard."""
    with pytest.raises(PublicationFailed) as failed:
        _publish_rising({**extra, "on_infeasible": "refuse"})  # r_th 2 unless ``extra`` says
    details = failed.value.details
    assert details["rows_over_threshold"] > 0
    assert details["rounds"] == extra["max_repair_rounds"]
    assert details["hint"].startswith(told) and told in str(failed.value)
    spent = sum(details["suppressed"].values())
    assert f"{spent} of {details['suppression_budget']} budgeted copies" in str(failed.value)

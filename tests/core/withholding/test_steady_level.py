"""The steady level of the default guarantee (design.md §5.8, "A steady level"): a term enters
the series under its true count by ``level_margin`` times the count's spread (over the share
of a release its overlap with the next holds), and no later release publishes more than that
first count, so that a later fall is a fall under the level. ``level_margin`` 0: no level."""

from __future__ import annotations

import math
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.errors import PublicationFailed
from app.core.history import SeriesHistory
from app.core.model import PublishedRelease, Transaction
from app.core.params import parse_params
from app.core.pipeline import publish
from app.core.withholding.totals import Level, entry_level, level_cap, levels
from tests.core.series_strategies import SmallSeries, hard_series, small_series
from tests.core.withholding.test_true_rows_properties import check_publication
from tests.oracle.serial_risk import violations


def test_a_level_is_the_count_of_the_first_release_that_published_the_term() -> None:
    assert levels([{"s": 0, "t": 9}, {"s": 12, "t": 7}, {"s": 30, "u": 4}]) == {
        "t": Level(9, 9),
        "s": Level(12, 30),
        "u": Level(4, 4),
    }


def test_a_later_release_may_return_to_a_count_published_already() -> None:
    """A series published before the level (or whose overlap once left room above it) keeps
    its highest count: publishing less than an earlier count would be a fall of its own."""
    assert level_cap(Level(20, 30), 2.0, 1.0) == 30
    assert level_cap(Level(20, 20), 2.0, 1.0) == 20
    assert level_cap(Level(20, 20), None) is None


@pytest.mark.parametrize(
    ("true", "margin", "level"),
    [(20, None, 20), (20, 0.0, 20), (20, 1.0, 15), (25, 1.0, 20), (100, 2.0, 80), (1, 2.0, 0)],
)
def test_a_term_enters_under_its_count_by_the_margin_times_its_spread(
    true: int, margin: float | None, level: int
) -> None:
    assert entry_level(true, margin) == level


def _publish(
    corpora: list[list[Transaction]], private: frozenset[str], **raw: object
) -> tuple[list[int | None], SeriesHistory]:
    """Each release's count of X (``None``: refused), and the history."""
    params = parse_params("sanony", {"cluster_size": 4, "seed": 1, "min_copies": 5, **raw})
    history = SeriesHistory()
    counts: list[int | None] = []
    for corpus in corpora:
        try:
            publication = publish("sanony", history, corpus, private, params)
        except PublicationFailed:
            counts.append(None)
            continue
        check_publication(corpus, private, publication.release)
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
        counts.append(publication.release.term_totals()["X"])
    return counts, history


def _rows(prefix: str, n: int, holding: int) -> list[Transaction]:
    """``n`` rows of sets no other release has, the first ``holding`` with X."""
    return [
        Transaction.of([f"{prefix}{i}", f"{prefix}-{i}", *(["X"] if i < holding else [])])
        for i in range(n)
    ]


def _same_set(n: int, holding: int) -> list[Transaction]:
    """``n`` rows of one public set, the first ``holding`` with X: every release's overlap
    with the next is every row."""
    return [Transaction.of(["p", "q", *(["X"] if i < holding else [])]) for i in range(n)]


@pytest.mark.parametrize(("margin", "expected"), [(2.0, [11, 11, 11, 11]), (1.0, [15, 15, 12, 15])])
def test_no_release_publishes_more_than_the_level(margin: float, expected: list[int]) -> None:
    """X holds 20, 30, 12 and 25 copies; the overlap is every row, so it enters with
    ``20 - margin sqrt(20)`` and no release publishes more."""
    corpora = [_same_set(40, x) for x in (20, 30, 12, 25)]
    counts, history = _publish(corpora, frozenset({"X"}), r_th=8, level_margin=margin)
    assert counts == expected
    assert violations(history.releases, 8) == []
    # Without a level each release publishes its true count.
    unlevelled, _ = _publish(corpora, frozenset({"X"}), r_th=8, level_margin=0)
    assert unlevelled == [20, 30, 12, 25]


def test_rows_no_release_shares_need_no_level() -> None:
    """Every row's set is its own: no overlap for a fall to be read through, so the level is
    the true count and the cap above it is none (``(level - margin sqrt(level)) / 0``)."""
    corpora = [_rows(f"r{k}-", 40, x) for k, x in enumerate((20, 30, 12, 25))]
    counts, history = _publish(corpora, frozenset({"X"}), r_th=8)
    assert counts == [20, 30, 12, 25]
    assert violations(history.releases, 8) == []


def _fallen() -> list[list[Transaction]]:
    """100 rows of private terms only (the empty public set: every release's overlap) and 16
    rows of new sets, 12 of them with X in release 1 and 8 in release 2. The overlap caps the
    copies of X there at release 2's count, so release 1's 16 other rows carry the rest."""
    shared = [Transaction.of(["Y"]) for _ in range(100)]
    return [shared + _rows("a", 16, 12), shared + _rows("b", 16, 8)]


def test_a_fall_that_pinned_the_term_is_a_fall_under_its_level() -> None:
    private = frozenset({"X", "Y"})
    counts, _ = _publish(_fallen(), private, r_th=2, level_margin=0)
    assert counts == [11, None]  # 11 copies published, then 8: refused (serial risk 2.17)
    # 100 of 116 rows repeat: X enters with at most (12 - 2 sqrt 12) / (100/116) = 5.9
    # copies, 4 within the admission's reserve (r_th / 4 for its own rows)...
    counts, history = _publish(_fallen(), private, r_th=2, level_margin=2.0)
    assert counts == [4, 4]
    assert violations(history.releases, 2) == []
    # ... and with a margin of 1, (12 - sqrt 12) / (100/116) = 9.9: a fall from 9 to 8.
    counts, history = _publish(_fallen(), private, r_th=2, level_margin=1.0)
    assert counts == [9, 8]
    assert violations(history.releases, 2) == []


def _overlap_share(releases: list[PublishedRelease]) -> float:
    """``N(O)/N`` expected of the newest release, from the public rows alone: the share of its
    rows whose set another of its rows has, or of its overlap with the release before."""
    rows = Counter(row for c in releases[-1].clusters for row in c.rows)
    n = sum(rows.values())
    repeated = sum(k for k in rows.values() if k > 1)
    shown = 0
    if len(releases) > 1:
        before = Counter(row for c in releases[-2].clusters for row in c.rows)
        shown = sum((rows & before).values())
    return max(repeated, shown) / n if n else 1.0


def _most(count: int, margin: float, share: float) -> int:
    """``(count - margin sqrt(count)) / share``, rounded down (design.md §5.8)."""
    if share == 0:
        return 10**9
    return max(0, math.floor((count - margin * math.sqrt(count)) / share + 1e-9))


def _over_the_level(
    releases: list[PublishedRelease], true: Counter[str], margin: float
) -> dict[str, int]:
    """Terms the newest release published above what the level allows: a new term above
    ``_most`` of its true count, an earlier one above the highest of ``_most`` of its level
    (the count it first published) and every count published before."""
    share = _overlap_share(releases)
    level: dict[str, int] = {}
    highest: Counter[str] = Counter()
    for release in releases[:-1]:
        for s, k in release.term_totals().items():
            if k:
                level.setdefault(s, k)
                highest[s] = max(highest[s], k)
    over = {}
    for s, k in releases[-1].term_totals().items():
        most = (
            _most(true[s], margin, share)
            if s not in level
            else max(highest[s], _most(level[s], margin, share))
        )
        if k > most:
            over[s] = k
    return over


def _publish_levelled(series: SmallSeries, margin: float) -> None:
    """Every release at ``margin`` (and admission 1, the hardest for the releases after):
    every row of every release within ``r_th`` by the oracle, no count above its level."""
    raw = {"r_th": series.r_th, "cluster_size": series.cluster_size, "seed": series.seed % 7}
    params = parse_params("sanony", {**raw, "min_copies": 1, "level_margin": margin})
    history = SeriesHistory()
    for corpus in series.corpora:
        try:
            publication = publish("sanony", history, corpus, series.private_terms, params)
        except PublicationFailed as refused:
            assert refused.details["smallest_r_th"] > series.r_th
            continue
        check_publication(corpus, series.private_terms, publication.release)
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
        assert violations(history.releases, series.r_th) == []
        true = Counter(s for t in corpus for s in t.terms & series.private_terms)
        assert _over_the_level(history.releases, true, margin) == {}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_series(), st.sampled_from([0.5, 1.0, 2.0]))
def test_every_row_within_r_th_and_no_count_above_its_level(
    series: SmallSeries, margin: float
) -> None:
    _publish_levelled(series, margin)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hard_series(), st.sampled_from([0.5, 1.0, 2.0]))
def test_hard_cases_within_r_th_and_no_count_above_its_level(
    series: SmallSeries, margin: float
) -> None:
    _publish_levelled(series, margin)

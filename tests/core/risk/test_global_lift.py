"""BP's global lift is the least the adversary needs, judged by the oracle.

Lemma 4 on whole releases kept every published count: a private term's count could only go up
(the ratchet). The least lift (:meth:`GlobalComposition.least_total`) asks formula 12 over the
whole releases instead. Here the oracle (``tests/oracle``, written apart from the production
code) says, for each candidate count of s in the newest release, whether any row of any release
is over ``r_th`` through the global composition; the production search must return the least
count it accepts. A second test shows the effect on a real series: counts fall where the
truth falls, and the series stays sound.
"""

from __future__ import annotations

import random
from collections import Counter
from fractions import Fraction

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.core.model import PublishedCluster, PublishedRelease, Transaction
from app.core.risk.composition import GlobalComposition
from app.core.risk.state import SeriesState
from tests.oracle.serial_risk import (
    ABSOLUTE_TOLERANCE,
    global_cover,
    release_view,
    view_posterior,
)

TERMS = "abcde"


def _release(rng: random.Random, release_no: int, s_copies: int) -> PublishedRelease:
    """A small release: 1-3 clusters of 2-6 rows over a few public terms; ``s_copies`` of s
    spread over the clusters' segments (at most one per row) and the rest in the bag."""
    clusters = []
    left = s_copies
    for c in range(rng.randint(1, 3)):
        rows = [
            tuple(sorted(set(rng.sample(TERMS, rng.randint(0, 2)))))
            for _ in range(rng.randint(2, 6))
        ]
        held = min(left, rng.randint(0, len(rows)))
        left -= held
        clusters.append(PublishedCluster(f"c{c + 1}", rows, {"s": held} if held else {}))
    n = sum(len(c.rows) for c in clusters)
    bag = {"s": left} if left else {}
    return PublishedRelease(release_no, clusters, bag, {"s": s_copies / n} if s_copies else {})


def _with_count(release: PublishedRelease, count: int) -> PublishedRelease:
    """``release`` with ``count`` copies of s (the bag takes the difference), its rate
    following, as BP's global lift and ``population_rates`` leave it."""
    in_clusters = sum(c.private_counts.get("s", 0) for c in release.clusters)
    bag = {"s": count - in_clusters} if count > in_clusters else {}
    n = release.n_rows
    return PublishedRelease(
        release.release_no, release.clusters, bag, {"s": count / n} if count else {}
    )


def _oracle_over(releases: list[PublishedRelease], r_th: float) -> bool:
    """Whether the oracle finds a row of some release over ``r_th`` for s through the global
    composition (2.3.2; formula 12 over the whole releases, formula 15)."""
    wholes = [release_view(r) for r in releases]
    for i, release in enumerate(releases):
        rate = Fraction(release.population_rates.get("s", 0))
        if not rate or not wholes[i].n_s("s"):
            continue
        the_cover = global_cover(wholes, i)
        for row in wholes[i].rows:
            beta = view_posterior(wholes[i], row, "s", the_cover)
            if beta / rate > Fraction(r_th) + ABSOLUTE_TOLERANCE:
                return True
    return False


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    releases=st.integers(2, 3),
    r_th=st.sampled_from([1.5, 2.0, 3.0, 5.0]),
)
def test_least_total_is_the_least_count_the_oracle_accepts(
    seed: int, releases: int, r_th: float
) -> None:
    rng = random.Random(seed)
    series = [_release(rng, k + 1, rng.randint(0, 6)) for k in range(releases)]
    newest = series[-1]
    start = sum(newest.term_totals().values())
    stop = start + 6
    state = SeriesState.from_published(series)
    composition = GlobalComposition(state, len(series) - 1, r_th * (1 + 1e-9))
    composition.refresh()
    found = composition.least_total("s", start, stop)
    expected = next(
        (
            c
            for c in range(start, stop + 1)
            if not _oracle_over([*series[:-1], _with_count(newest, c)], r_th)
        ),
        None,
    )
    assert found == expected


def _diluted(release: PublishedRelease, rows: int) -> PublishedRelease:
    """``release`` with ``rows`` more rows without s, each a set no release holds (outside
    every overlap), its published rate of s kept as it was."""
    fresh = PublishedCluster("fresh", [(f"f{i}",) for i in range(rows)], {})
    clusters = [*release.clusters, fresh] if rows else release.clusters
    return PublishedRelease(
        release.release_no, clusters, release.global_bag, release.population_rates
    )


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    releases=st.integers(2, 3),
    r_th=st.sampled_from([1.5, 2.0, 3.0, 5.0]),
)
# Most draws need no row (the newest release is within r_th already): these need 4 and 2.
@example(seed=372, releases=2, r_th=1.5)
@example(seed=9, releases=3, r_th=2.0)
def test_least_dilution_is_the_least_the_oracle_accepts(
    seed: int, releases: int, r_th: float
) -> None:
    """The repair's remedy for a term pinned from both sides at the level of whole releases
    (``Repairer._dilute_globally``): the least number of rows outside every overlap that the
    newest release needs, its copies and published rate as they are, for the oracle to find
    no row of any release over ``r_th`` through the global composition."""
    rng = random.Random(seed)
    series = [_release(rng, k + 1, rng.randint(0, 6)) for k in range(releases)]
    newest = series[-1]
    count = sum(newest.term_totals().values())
    rate = newest.population_rates.get("s", 0.0)
    stop = 12
    state = SeriesState.from_published(series)
    composition = GlobalComposition(state, len(series) - 1, r_th * (1 + 1e-9))
    composition.refresh()
    found = composition.least_dilution("s", count, rate, stop)
    expected = next(
        (d for d in range(stop + 1) if not _oracle_over([*series[:-1], _diluted(newest, d)], r_th)),
        None,
    )
    assert found == expected


def _series(seed: int) -> list[list[Transaction]]:
    """Three yearly snapshots keeping 60% of the last; a private term whose true count falls
    from 30 to 15 to 8 (rows drawn afresh each year)."""
    rng = random.Random(seed)

    def row(with_s: bool) -> Transaction:
        terms = set(rng.sample([f"t{i}" for i in range(30)], rng.randint(1, 3)))
        return Transaction.of(terms | ({"HIV"} if with_s else set()))

    snapshots = []
    current = [row(i < 30) for i in range(600)]
    for falling in (15, 8):
        snapshots.append(current)
        kept = [t for t in rng.sample(current, 360) if "HIV" not in t.terms]
        current = kept + [row(i < falling) for i in range(600 - len(kept))]
    snapshots.append(current)
    return snapshots


@pytest.mark.parametrize("seed", [1, 2])
def test_counts_fall_with_the_truth_and_the_series_stays_sound(seed: int) -> None:
    from app.core.history import SeriesHistory
    from app.core.pipeline import publish
    from tests.core.paper_mode import parse_params
    from tests.oracle.serial_risk import violations

    published: dict[str, list[int]] = {}
    for lift in ("least", "lemma4"):
        history = SeriesHistory()
        params = parse_params("sanony", {"r_th": 8, "seed": seed, "global_lift": lift})
        counts = []
        for snapshot in _series(seed):
            publication = publish("sanony", history, snapshot, frozenset({"HIV"}), params)
            history.releases.append(publication.release)
            history.ledgers.append(publication.ledger)
            counts.append(publication.release.term_totals()["HIV"])
        assert violations(history.releases, 8) == []
        published[lift] = counts
    truth = [Counter(s for t in snap for s in t.terms)["HIV"] for snap in _series(seed)]
    # Lemma 4 on whole releases keeps the first count; the least lift follows the truth down
    # as far as the adversary allows, never above Lemma 4's.
    assert published["lemma4"][1] >= truth[0] > truth[1]
    assert all(
        t <= least <= old
        for t, least, old in zip(truth, published["least"], published["lemma4"], strict=True)
    )
    assert published["least"][1] < published["lemma4"][1]

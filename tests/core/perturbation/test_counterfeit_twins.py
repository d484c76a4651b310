"""Counterfeits as rare as true rows: twins of true rows, matched by rarity class.

Fresh counterfeits are sets the whole series lacks; a ranking of rows by how many copies of
their set the series holds found them with AUC 0.84-0.95 on BMS-WebView-1 and -2. With
``counterfeits: blend`` (the default) a counterfeit may repeat a true row of its cluster, chosen
so that the release's counterfeits are about as rare as its true rows. The ranking here is
written apart from the factory (copies of a set over every published row, nothing else).
"""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import HealthCheck, assume, given, settings
from sklearn.metrics import roc_auc_score

from app.core.errors import PublicationFailed
from app.core.history import SeriesHistory
from app.core.model import PublishedRelease, ReleaseLedger, Transaction
from app.core.perturbation.counterfeit import CounterfeitFactory
from app.core.pipeline import publish
from app.core.risk.state import ClusterState, ReleaseState, SeriesState
from app.core.segen import segen
from tests.core.paper_mode import parse_params
from tests.core.series_strategies import SmallSeries, small_series
from tests.oracle.serial_risk import violations

PRIVATE = frozenset({"HIV", "cancer", "flu"})


def _zipf_corpus(seed: int, n: int = 3000) -> list[frozenset[str]]:
    """Click-stream-like rows: few terms, popular terms much more often (Zipf), 15% with a
    private term."""
    rng = random.Random(seed)
    terms = [f"t{i}" for i in range(300)]
    weights = [1 / (i + 1) for i in range(300)]
    rows = []
    for _ in range(n):
        row = set(rng.choices(terms, weights=weights, k=rng.choice([1, 1, 1, 2, 2, 3, 4, 6])))
        if rng.random() < 0.15:
            row.add(rng.choice(sorted(PRIVATE)))
        rows.append(frozenset(row))
    return rows


def _series(mode: str, seed: int = 2) -> tuple[list[PublishedRelease], list[ReleaseLedger]]:
    base = _zipf_corpus(seed)
    params = parse_params("sanony", {"r_th": 4.0, "seed": seed, "counterfeits": mode})
    history = SeriesHistory()
    for positions in segen(len(base), 1000, 4, 0.4, seed=seed):
        snapshot = [Transaction(base[p], f"p{p}") for p in positions]
        publication = publish("sanony", history, snapshot, PRIVATE, params)
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
    return history.releases, history.ledgers


def _rarity_auc(releases: list[PublishedRelease], ledgers: list[ReleaseLedger]) -> float:
    """AUC of ranking every published row by how few copies of its set the series holds."""
    copies: Counter[tuple[str, ...]] = Counter()
    for release in releases:
        for cluster in release.clusters:
            copies.update(cluster.rows)
    labels, scores = [], []
    for release, ledger in zip(releases, ledgers, strict=True):
        for cluster, led in zip(release.clusters, ledger.clusters, strict=True):
            fake = set(led.counterfeit_rows)
            for position, row in enumerate(cluster.rows):
                labels.append(position in fake)
                scores.append(-copies[row])
    assert sum(labels) >= 30, sum(labels)  # enough counterfeits for an AUC to mean something
    return float(roc_auc_score(labels, scores))


def test_fresh_counterfeits_are_found_by_set_rarity_and_blended_ones_are_not() -> None:
    fresh = _rarity_auc(*_series("fresh"))
    blend = _rarity_auc(*_series("blend"))
    assert fresh >= 0.8, fresh  # the detector works: fresh rows are the rarest sets
    assert 0.35 <= blend <= 0.65, blend  # neither rarer nor commoner than true rows


def _state(new_clusters: list[list[tuple[str, ...]]], old: list[tuple[str, ...]]) -> SeriesState:
    def cluster(name: str, rows: list[tuple[str, ...]]) -> ClusterState:
        return ClusterState(name, list(rows), Counter(), {}, n_true=len(rows))

    first = ReleaseState(1, [cluster("c1", old)], Counter(), {})
    second = ReleaseState(
        2, [cluster(f"c{i + 1}", rows) for i, rows in enumerate(new_clusters)], Counter(), {}
    )
    return SeriesState([first, second])


def test_a_twin_never_repeats_a_set_another_cluster_of_the_release_holds() -> None:
    # ("a",) is in both clusters of release 2 (a state the factory must not make worse):
    # a counterfeit of cluster 2 may repeat ("b", "c") but never ("a",).
    state = _state([[("a",), ("a",)], [("a",), ("b", "c"), ("b", "c")]], [("a",), ("b", "c")])
    factory = CounterfeitFactory(state, 1, Counter({"a": 3, "b": 2, "c": 2}), seed=4)
    cluster = state.releases[1].clusters[1]
    twins = 0
    for _ in range(40):
        row = factory.make(1, cluster)
        assert row != ("a",)
        twins += row == ("b", "c")
        state.add_row((1, 1), row)
    assert twins  # twins are made where they may be


def test_a_twin_leaves_every_overlap_as_it_is() -> None:
    # Release 1 holds ("b", "c") three times, the new cluster twice: one more would join the
    # overlap (min(2, 3) -> min(3, 3)). ("d", "e") is held by no other release: its twins are
    # free. Lemma 4 asks a counterfeit to leave N(O) as it is.
    old = [("b", "c")] * 3 + [("a",)]
    state = _state([[("b", "c"), ("b", "c"), ("d", "e"), ("d", "e")]], old)
    terms = Counter(dict.fromkeys("abcdefghijklmnop", 2))
    factory = CounterfeitFactory(state, 1, terms, seed=11)
    cluster = state.releases[1].clusters[0]

    def overlap() -> int:
        mine, theirs = Counter(cluster.rows), Counter(state.releases[0].clusters[0].rows)
        return sum(min(k, theirs[row]) for row, k in mine.items())

    twins = 0
    for _ in range(30):
        row = factory.make(0, cluster)
        assert row != ("b", "c")
        twins += row == ("d", "e")
        state.add_row((1, 0), row)
        assert overlap() == 2
    assert twins


def test_fresh_mode_never_repeats_a_row_of_the_cluster() -> None:
    state = _state([[("a",), ("b", "c"), ("b", "c")]], [("a",), ("b", "c")])
    factory = CounterfeitFactory(state, 1, Counter({"a": 1, "b": 2, "c": 2}), seed=4, twins=False)
    cluster = state.releases[1].clusters[0]
    for _ in range(10):
        row = factory.make(0, cluster)
        assert row not in {("a",), ("b", "c")}
        state.add_row((1, 0), row)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_series())
def test_blended_series_are_sound_and_keep_one_cluster_per_set(series: SmallSeries) -> None:
    """Every release judged by the oracle after it is published; and a twin (a counterfeit that
    repeats a true row of its cluster) repeats no set that another cluster's true rows hold."""
    raw = {"r_th": series.r_th, "cluster_size": series.cluster_size, "seed": series.seed % 7}
    params = parse_params("sanony", {**raw, "counterfeits": "blend"})
    history = SeriesHistory()
    for corpus in series.corpora:
        try:
            publication = publish("sanony", history, corpus, series.private_terms, params)
        except PublicationFailed:
            assume(False)
            return
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
        assert violations(history.releases, series.r_th) == []
        pairs = list(zip(publication.release.clusters, publication.ledger.clusters, strict=True))
        true_rows = [
            {r for p, r in enumerate(cluster.rows) if p not in set(led.counterfeit_rows)}
            for cluster, led in pairs
        ]
        for c, (cluster, led) in enumerate(pairs):
            for position in led.counterfeit_rows:
                row = cluster.rows[position]
                if row not in true_rows[c]:
                    continue  # a fresh row (tiny vocabularies may repeat one: Definition 14)
                others = [d for d, held in enumerate(true_rows) if d != c and row in held]
                assert not others, (row, c, others)

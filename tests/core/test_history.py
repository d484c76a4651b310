"""What a series' history keeps of each release it is given (app/core/history.py)."""

from __future__ import annotations

from app.core.history import SeriesHistory
from app.core.model import ClusterLedger, PublishedCluster, PublishedRelease, ReleaseLedger


def _published() -> tuple[PublishedRelease, ReleaseLedger]:
    release = PublishedRelease(
        1, [PublishedCluster("c1", [("a",), ("a", "b")], {"hiv": 1})], {"flu": 2}, {}
    )
    ledger = ReleaseLedger(
        [ClusterLedger(individuals=["p1", "p2"], suppressed={"hiv": 1})],
        global_bag_counterfeits={"flu": 1},
        suppressed={"hiv": 1, "flu": 3},
        randomness={"source": "publisher_seed", "seed": 7},
    )
    return release, ledger


def test_a_past_ledger_keeps_its_totals_and_drops_its_clusters() -> None:
    release, ledger = _published()
    history = SeriesHistory()
    history.add(release, ledger)
    kept = history.ledgers[0]
    assert history.releases == [release]
    assert kept.clusters == []
    assert kept.suppressed == {"hiv": 1, "flu": 3}
    assert kept.global_bag_counterfeits == {"flu": 1}
    assert kept.randomness == {"source": "publisher_seed", "seed": 7}
    assert history.next_release_no == 2


def test_the_published_ledger_is_left_whole() -> None:
    # publish-local writes the ledger after the history took it: the history's copy must not
    # alias the one written.
    release, ledger = _published()
    history = SeriesHistory()
    history.add(release, ledger)
    history.ledgers[0].suppressed["hiv"] = 99
    assert ledger.suppressed == {"hiv": 1, "flu": 3}
    assert ledger.clusters[0].individuals == ["p1", "p2"]

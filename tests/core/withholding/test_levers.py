"""The levers of the default guarantee, each on a case made for it (design.md §5.8)."""

from __future__ import annotations

from collections import Counter

from app.core.history import SeriesHistory
from app.core.model import Transaction
from app.core.params import parse_params
from app.core.pipeline import publish
from app.core.risk.state import ClusterState, ReleaseState
from app.core.withholding.copies import Copies
from tests.oracle.serial_risk import violations


def _release(segments: list[dict[str, int]], bag: dict[str, int], sizes: list[int]) -> ReleaseState:
    clusters = [
        ClusterState(f"c{i + 1}", [(f"r{i}-{k}",) for k in range(n)], Counter(seg), {}, n_true=n)
        for i, (seg, n) in enumerate(zip(segments, sizes, strict=True))
    ]
    return ReleaseState(1, clusters, Counter(bag), {})


def _published(copies: Copies, s: str) -> int:
    release = copies.release
    return sum(c.private_counts.get(s, 0) for c in release.clusters) + release.global_bag[s]


def test_copies_move_between_segment_bag_and_nowhere_never_above_the_truth() -> None:
    # Cluster 1's rows hold 3 copies of s (2 kept, 1 in the bag); cluster 2's hold none, but
    # Anony's refining placed one of the bag's there.
    release = _release([{"s": 2}, {"s": 1}], {"s": 0}, [10, 10])
    copies = Copies(release, [Counter({"s": 3}), Counter()], threshold=8)
    assert copies.placed[1]["s"] == 1 and copies.total("s") == 3
    assert copies.to_bag(1, "s")  # the placed copy goes first
    assert copies.from_bag(0, "s")  # cluster 1 takes its own copy back
    assert not copies.from_bag(1, "s")  # cluster 2 has none of its own
    assert copies.suppress("s", 2) == 2  # the bag's copy, then a segment's
    assert _published(copies, "s") == 1
    assert sum(copies.suppressed_total().values()) == 2
    copies.settle()
    assert all(c.global_share.get("s", 0) <= c.n for c in release.clusters)


def test_an_empty_cluster_publishes_no_copy_and_no_share() -> None:
    release = _release([{"s": 2}, {}], {"s": 6}, [20, 20])
    copies = Copies(release, [Counter({"s": 8}), Counter()], threshold=8)
    copies.empty_cluster(0)
    copies.settle()
    assert release.clusters[0].private_counts == Counter()
    assert release.clusters[0].global_share == {}
    assert release.global_bag["s"] == 8


def test_a_recurring_row_of_a_holding_cluster_is_generalised() -> None:
    """Release 1's new sets hold copies of s; release 2 repeats one of them (a patient seen
    again): the row is published without its rarest public term, and the holding cluster
    is overlapped by nothing."""
    first = [Transaction.of([f"p{i % 3}", f"q{i}", *(["s"] if i % 2 else [])]) for i in range(12)]
    second = [Transaction.of(["p1", "q1", "s"])] + [
        Transaction.of([f"p{i % 3}", f"x{i}"]) for i in range(11)
    ]
    # No steady level (it would keep s's count under the fall the lever is for).
    params = parse_params(
        "sanony", {"r_th": 4, "cluster_size": 4, "min_copies": 1, "seed": 1, "level_margin": 0}
    )
    history = SeriesHistory()
    for corpus in (first, second):
        publication = publish("sanony", history, corpus, frozenset({"s"}), params)
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
    report = publication.report
    assert report["rows_generalised"] == 1 and report["public_terms_suppressed"] == 1
    assert ("p1", "q1") not in history.releases[1].row_counts()
    assert violations(history.releases, 4) == []


def test_decoupling_generalises_the_rows_a_fallen_count_is_read_through() -> None:
    """Release 1: 24 rows of one popular set and 16 rows of new sets, 8 of them with X;
    release 2: the popular set again and 16 new sets, no X. The popular set caps the copies of
    X in the overlap at 0; generalised to the empty set, release 2's popular rows leave it."""
    popular = [Transaction.of(["p"]) for _ in range(24)]
    first = popular + [
        Transaction.of([f"a{i}", f"b{i}", *(["X"] if i < 8 else [])]) for i in range(16)
    ]
    second = popular + [Transaction.of([f"c{i}", f"d{i}"]) for i in range(16)]
    # No steady level (it would keep X's count under the fall the lever is for).
    params = parse_params(
        "sanony", {"r_th": 2, "cluster_size": 4, "seed": 1, "min_copies": 5, "level_margin": 0}
    )
    history = SeriesHistory()
    for corpus in (first, second):
        publication = publish("sanony", history, corpus, frozenset({"X"}), params)
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
    steps = publication.report["escalation"]["steps"]
    assert steps[0]["step"] == "decoupling" and steps[0]["terms"] == ["X"]
    assert 0 < steps[0]["rows_generalised"] <= 24
    assert violations(history.releases, 2) == []

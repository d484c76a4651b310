"""Lineages of the new release's clusters (design.md §5.6), and where a lineage is split."""

from __future__ import annotations

from app.core.anonymisation.lineage import Lineages, lineage_clusters, lineage_components

A, B, C = ("a",), ("b",), ("c",)


def _published() -> list[list[list[tuple[str, ...]]]]:
    """Release 1 holds a and b in one cluster (one lineage); release 2 holds them in two
    clusters, c beside a."""
    return [[[A, B, B]], [[A, C], [B, B]]]


def test_components_know_which_clusters_held_each_set() -> None:
    lineages = lineage_components(_published())
    assert isinstance(lineages, Lineages)
    assert lineages[A] == lineages[B] == lineages[C]
    # Clusters are numbered in publication order: release 1's, then release 2's.
    assert lineages.release_of == [0, 1, 1]
    assert lineages.nodes == {A: [0, 1], B: [0, 2], C: [1]}


def test_a_lineage_the_newest_release_held_apart_is_split_alike() -> None:
    """40 rows of the lineage (twice cluster_size and more): one cluster would overlap both of
    release 2's clusters, each row outside the other's overlap; split as release 2 held it,
    a and c together (c beside a there), b apart."""
    rows = [A] * 15 + [B] * 20 + [C] * 5
    parts = lineage_clusters(rows, lineage_components(_published()), 10)
    sets = sorted(sorted({rows[i] for i in part}) for part in parts)
    assert sets == [[A, C], [B]]
    # A plain mapping of lineages (no clusters known) keeps the lineage whole.
    whole = lineage_clusters(rows, dict(lineage_components(_published())), 10)
    assert [sorted({rows[i] for i in part}) for part in whole] == [[A, B, C]]


def test_a_small_lineage_stays_whole() -> None:
    """Fewer than twice cluster_size rows: a split would leave parts short of it."""
    rows = [A] * 8 + [B] * 8
    parts = lineage_clusters(rows, lineage_components(_published()), 10)
    assert [sorted({rows[i] for i in part}) for part in parts] == [[A, B]]

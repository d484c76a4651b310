"""The rows split from a corpus, and their positions gathered in the same pass (sanony)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.core.anonymisation.lineage import lineage_clusters, whole_set_runs
from app.core.model import Transaction
from app.core.perturbation.sanony import split_rows

TERMS = ("a", "b", "c", "d", "s1", "s2")
PRIVATE = frozenset({"s1", "s2"})

corpora = st.lists(
    st.frozensets(st.sampled_from(TERMS), min_size=1, max_size=4).map(Transaction),
    min_size=1,
    max_size=60,
)


@given(corpora)
def test_positions_are_each_rows_own_ascending_in_order_of_first_appearance(
    corpus: list[Transaction],
) -> None:
    rows, private_sets, groups = split_rows(corpus, PRIVATE)
    assert rows == [tuple(sorted(t.terms - PRIVATE)) for t in corpus]
    assert private_sets == [t.terms & PRIVATE for t in corpus]
    # Written out: each distinct row, where it first appears, with every position holding it.
    expected: dict[tuple[str, ...], list[int]] = {}
    for i, row in enumerate(rows):
        expected.setdefault(row, []).append(i)
    assert list(groups.items()) == list(expected.items())


@given(corpora, st.integers(1, 5))
def test_clusterings_read_the_gathered_positions_as_their_own(
    corpus: list[Transaction], size: int
) -> None:
    rows, _, groups = split_rows(corpus, PRIVATE)
    assert whole_set_runs(rows, size, groups) == whole_set_runs(rows, size)
    published = {row: k % 3 for k, row in enumerate(dict.fromkeys(rows)) if k % 2}
    assert lineage_clusters(rows, published, size, groups) == lineage_clusters(
        rows, published, size
    )

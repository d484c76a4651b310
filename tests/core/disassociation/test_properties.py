"""Invariants of disassociation on random corpora (hypothesis)."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.disassociation import (
    DisassociatedRelease,
    Disassociation,
    DisassociationParams,
    disassociate,
    is_km_anonymous,
)
from app.core.model import Transaction

TERMS = [f"t{i}" for i in range(12)]


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[Transaction], DisassociationParams]:
    records = draw(
        st.lists(st.sets(st.sampled_from(TERMS), min_size=1, max_size=6), min_size=1, max_size=60)
    )
    k = draw(st.integers(2, 5))
    params = DisassociationParams(
        k=k,
        m=draw(st.integers(1, 3)),
        max_cluster_size=draw(st.integers(k + 1, 3 * k + 4)),
        strategy=draw(st.sampled_from(["suppression", "adding", "remaining_list"])),
        vertical=draw(st.sampled_from(["shared", "all_combinations"])),
        refine=draw(st.booleans()),
    )
    return [Transaction.of(r) for r in records], params


def _chunks(result: Disassociation) -> list[list[frozenset[str]]]:
    chunks = [list(c.subrecords) for cl in result.clusters for c in cl.record_chunks]
    return chunks + [list(c.subrecords) for j in result.joint_clusters for c in j.shared_chunks]


@given(cases())
@settings(max_examples=150, deadline=None)
def test_every_record_and_shared_chunk_is_km_anonymous(case: tuple) -> None:
    corpus, params = case
    result = disassociate(corpus, params)
    for subrecords in _chunks(result):
        assert is_km_anonymous(subrecords, params.k, params.m)


@given(cases())
@settings(max_examples=150, deadline=None)
def test_every_term_of_every_kept_record_is_covered_exactly_once(case: tuple) -> None:
    corpus, params = case
    result = disassociate(corpus, params)
    kept = [i for c in result.clusters for i in c.members]
    assert sorted(kept + list(result.suppressed)) == list(range(len(corpus)))
    shared: dict[int, Counter[str]] = {}
    for joint in result.joint_clusters:
        members = [i for c in joint.clusters for i in result.clusters[c].members]
        for chunk in joint.shared_chunks:
            for i, sub in zip(members, chunk.subrecords, strict=True):
                shared.setdefault(i, Counter()).update(sub)
    for cluster in result.clusters:
        for row, i in enumerate(cluster.members):
            seen = Counter(t for c in cluster.record_chunks for t in c.subrecords[row])
            seen.update(corpus[i].terms & cluster.term_chunk)
            seen.update(shared.get(i, Counter()))
            assert seen == Counter(corpus[i].terms)


@given(cases())
@settings(max_examples=100, deadline=None)
def test_clusters_respect_k_and_terms_below_k_stay_in_term_chunks(case: tuple) -> None:
    corpus, params = case
    result = disassociate(corpus, params)
    for cluster in result.clusters:
        if len(corpus) >= params.k:
            assert len(cluster.members) >= params.k
        support = Counter(t for i in cluster.members for t in corpus[i].terms)
        assert all(support[t] < params.k for t in cluster.term_chunk)


@given(cases())
@settings(max_examples=50, deadline=None)
def test_public_layout_round_trips_and_hides_the_alignment(case: tuple) -> None:
    corpus, params = case
    release = disassociate(corpus, params).public()
    layout = release.to_json()
    assert DisassociatedRelease.from_json(layout) == release
    for cluster in layout["clusters"]:
        for chunk in cluster["record_chunks"]:
            assert chunk == sorted(chunk) and all(chunk)


def test_is_deterministic_for_a_fixed_corpus() -> None:
    corpus = [Transaction.of({f"t{(i * j) % 7}" for j in range(1, 4)}) for i in range(40)]
    first = disassociate(corpus, DisassociationParams(k=3, max_cluster_size=9)).public()
    assert first == disassociate(corpus, DisassociationParams(k=3, max_cluster_size=9)).public()
    # i*j mod 7 makes seven classes of identical records; each class is one cluster.
    assert [c.size for c in first.clusters] == [6, 6, 6, 6, 5, 6, 5]

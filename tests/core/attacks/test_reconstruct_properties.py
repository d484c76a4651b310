"""Invariants of the reconstruction and its measures on random corpora (hypothesis)."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.attacks.breakage import measure_reconstruction
from app.core.attacks.reconstruct import METHODS, reconstruct
from app.core.attacks.scoring import CooccurrenceRelatedness
from app.core.disassociation import DisassociationParams, disassociate
from app.core.model import Transaction
from tests.core.attacks.topics import world

TERMS = [f"t{i}" for i in range(10)]
BACKGROUND = CooccurrenceRelatedness([t.terms for t in world(200, 9)] + [set(TERMS[:5])])


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[Transaction], DisassociationParams, str]:
    records = draw(
        st.lists(st.sets(st.sampled_from(TERMS), min_size=1, max_size=5), min_size=2, max_size=40)
    )
    k = draw(st.integers(2, 4))
    params = DisassociationParams(
        k=k, m=draw(st.integers(2, 3)), max_cluster_size=draw(st.integers(k + 1, 3 * k))
    )
    return [Transaction.of(r) for r in records], params, draw(st.sampled_from(METHODS))


@given(cases())
@settings(max_examples=80, deadline=None)
def test_every_published_piece_is_placed_as_often_as_published(case: tuple) -> None:
    corpus, params, method = case
    result = disassociate(corpus, params)
    release = result.public()
    rebuilt = reconstruct(release, BACKGROUND, method, vpa_budget=20)
    for c, (cluster, rc) in enumerate(zip(release.clusters, rebuilt.clusters, strict=True)):
        # Shared chunks are spread over the slots of the joint cluster: left out here.
        shared = {
            t
            for j in release.joint_clusters
            if c in j.clusters
            for chunk in j.shared_chunks
            for s in chunk
            for t in s
        }
        placed = Counter(t for added in rc.added for t in added if t not in shared)
        expected = Counter(t for chunk in cluster.record_chunks[1:] for s in chunk for t in s)
        expected.update({t: min(params.k - 1, cluster.size) for t in cluster.term_chunk})
        assert placed == expected
        assert all(
            not (added & set(anchor)) for anchor, added in zip(rc.anchors, rc.added, strict=True)
        )
    report = measure_reconstruction(corpus, result, rebuilt)
    for value in (report.accuracy, report.transactions_breakage, report.km_breakage):
        assert 0.0 <= value <= 1.0


def test_a_release_with_nothing_disassociated_has_nothing_to_break() -> None:
    corpus = [Transaction.of(["a", "b"])] * 6
    result = disassociate(corpus, DisassociationParams(k=2, max_cluster_size=10))
    report = measure_reconstruction(corpus, result, reconstruct(result.public(), None, "random"))
    assert (report.records, report.accuracy, report.protected_itemsets) == (0, 0.0, 0)

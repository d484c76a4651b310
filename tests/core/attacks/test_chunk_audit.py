"""The audit of a disassociated release (design.md §11): background from chunks, every attack
scored against the publisher's result, the report kept for auditors."""

from __future__ import annotations

import json

import pytest

from app.core.attacks import chunk_background, measure_reconstruction, reconstruct
from app.core.attacks.chunk_audit import audit_disassociation
from app.core.attacks.release_audit import audit_report, published_background
from app.core.attacks.scoring import CooccurrenceRelatedness
from app.core.attacks.settings import AuditSettings
from app.core.disassociation import DisassociationParams
from app.core.disassociation.model import DisassociatedRelease, Disassociation
from app.core.disassociation.publish import publish_disassociation
from app.core.history import SeriesHistory
from app.core.model import Publication, Transaction
from tests.core.attacks.topics import MIXED, mixed_clusters

Published = tuple[list[Transaction], Publication]
MEASURES = (
    "accuracy",
    "accuracy_record_chunks",
    "accuracy_term_chunk",
    "transactions_breakage",
    "km_breakage",
    "precision",
)


@pytest.fixture(scope="module", params=[2, 3], ids=["k2", "k3"])
def published(request: pytest.FixtureRequest) -> Published:
    corpus = mixed_clusters(200, 1)
    params = DisassociationParams(k=request.param, m=2, max_cluster_size=10)
    return corpus, publish_disassociation(SeriesHistory(), corpus, frozenset(), params)


def _layout(publication: Publication) -> DisassociatedRelease:
    assert isinstance(publication.release.layout, DisassociatedRelease)
    return publication.release.layout


def test_the_publication_keeps_its_ground_truth_and_counts_its_records(
    published: Published,
) -> None:
    corpus, publication = published
    assert publication.extra(Disassociation) is not None
    assert publication.extra(Disassociation).public() == publication.release.layout
    # A layout release counts the records its clusters cover (it has no Anony rows).
    assert publication.release.n_rows == len(corpus) == publication.report["records"]
    assert publication.release.n_clusters == publication.report["clusters"] == 20


def test_the_published_background_is_the_layout_s_chunks(published: Published) -> None:
    _, publication = published
    layout = _layout(publication)
    background = published_background([publication.release])
    assert background == chunk_background([layout])
    sub_records = sum(len(chunk) for c in layout.clusters for chunk in c.record_chunks)
    shared = sum(len(chunk) for j in layout.joint_clusters for chunk in j.shared_chunks)
    assert len(background) == sub_records + shared + len(layout.clusters)
    # Each cluster is one transaction of all its terms, term chunk included.
    first = layout.clusters[0]
    together = background[sum(len(chunk) for chunk in first.record_chunks)]
    assert set(first.term_chunk) <= set(together)


def test_every_attack_is_the_benchmark_s_reconstruction(published: Published) -> None:
    corpus, publication = published
    truth = publication.extra(Disassociation)
    assert truth is not None
    background = published_background([publication.release])
    progress: list[tuple[str, float]] = []
    raw = audit_disassociation(
        corpus, truth, background, progress=lambda p, f: progress.append((p, f))
    )
    assert list(raw["reassociation"]) == [
        "aba-ngd",
        "mra-ngd",
        "rga-ngd",
        "aba+update-ngd",
        "mra+update-ngd",
        "random",
    ]
    # The same as benchmarks/attack_runs.py's path: reconstruct, then measure.
    relatedness = CooccurrenceRelatedness(background)
    expected = measure_reconstruction(
        corpus, truth, reconstruct(_layout(publication), relatedness, "mra", update=True)
    )
    assert raw["reassociation"]["mra+update-ngd"]["accuracy"] == expected.accuracy
    assert raw["reassociation"]["mra+update-ngd"]["km_breakage"] == expected.km_breakage
    assert raw["disassociation"]["tlost"] == pytest.approx(publication.report["tlost"], abs=1e-6)
    fractions = [f for _, f in progress]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert {p for p, _ in progress} == {"scoring", "reassociate"}


def test_the_report_holds_aggregates_only_and_beats_random_with_a_world_background(
    published: Published,
) -> None:
    corpus, publication = published
    world = [sorted(t.terms) for t in mixed_clusters(400, 7)]
    report = audit_report(
        corpus,
        publication.release,
        publication.ledger,
        world,
        AuditSettings(enabled=True, selection=("aba", "mra")),
        method="disassociation",
        disassociation=publication.extra(Disassociation),
    )
    assert (report["status"], report["reason"]) == ("done", None)
    assert set(report["reassociation"]) == {
        "aba-ngd",
        "mra-ngd",
        "aba+update-ngd",
        "mra+update-ngd",
        "random",
    }
    for measured in report["reassociation"].values():
        assert all(0.0 <= measured[m] <= 1.0 for m in MEASURES)
        assert 0 < measured["records"] <= len(corpus)
    best = report["best_reassociation"]
    random_accuracy = report["reassociation"]["random"]["accuracy"]
    # Records of two topics share each cluster: knowing the topics puts terms back.
    assert best["accuracy"] > random_accuracy + 0.1
    assert best["lift_over_random"] == pytest.approx(best["accuracy"] / random_accuracy)
    assert report["disassociation"]["records"] == len(corpus) == report["rows"]
    assert report["disassociation"]["suppressed_records"] == 0
    text = json.dumps(report, allow_nan=False)  # JSONB takes no NaN
    vocabulary = {term for terms in MIXED.values() for term in terms}
    assert not [term for term in vocabulary if f'"{term}"' in text]


@pytest.mark.parametrize(
    ("background", "truth", "reason"),
    [
        ([["alibi"]], False, "no_ground_truth"),
        ([], True, "no_background"),
    ],
)
def test_skipped(
    published: Published, background: list[list[str]], truth: bool, reason: str
) -> None:
    corpus, publication = published
    report = audit_report(
        corpus,
        publication.release,
        publication.ledger,
        background,
        AuditSettings(enabled=True),
        method="disassociation",
        disassociation=publication.extra(Disassociation) if truth else None,
    )
    assert (report["status"], report["reason"]) == ("skipped", reason)

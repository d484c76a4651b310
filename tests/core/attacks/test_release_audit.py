"""The audit a publication job keeps: settings, background, tracing rows, the report."""

from __future__ import annotations

import json

import pytest

from app.core.attacks.release_audit import audit_report, published_background
from app.core.attacks.settings import AuditSettings, parse_audit_settings
from app.core.attacks.tracing import trace_by_content
from app.core.errors import InvalidCorpus, InvalidParameter
from app.core.history import SeriesHistory
from app.core.model import Publication, Transaction
from app.core.params import PublishParams
from app.core.pipeline import publish
from tests.core.attacks.topics import PRIVATE, world

Published = tuple[list[Transaction], Publication]


@pytest.fixture(scope="module")
def published() -> Published:
    corpus = world(300, 5)
    return corpus, publish(
        "sanony", SeriesHistory(), corpus, PRIVATE, PublishParams(cluster_size=4, seed=2)
    )


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, AuditSettings()),
        (True, AuditSettings(enabled=True)),
        ({}, AuditSettings(enabled=True)),
        ({"enabled": False, "scoring": "embedding"}, AuditSettings(scoring="embedding")),
        (
            {"selection": ["rga", "aba", "rga"]},
            AuditSettings(enabled=True, selection=("aba", "rga")),
        ),
        (
            {"selection": "all", "seed": 4, "window": 9, "background": "uploaded"},
            AuditSettings(enabled=True, seed=4, window=9, background="uploaded"),
        ),
        ({"mixture_draws": 0}, AuditSettings(enabled=True, mixture_draws=0)),
        ({"mixture_draws": 256}, AuditSettings(enabled=True, mixture_draws=256)),
    ],
)
def test_settings(raw: object, expected: AuditSettings) -> None:
    assert parse_audit_settings(raw) == expected


@pytest.mark.parametrize(
    ("raw", "param"),
    [
        ({"scoring": "bert"}, "semantic_audit.scoring"),
        ({"seed": True}, "semantic_audit.seed"),
        ({"selection": "vpa"}, "semantic_audit.selection"),
        ({"mixture_draws": -1}, "semantic_audit.mixture_draws"),
        ({"mixture_draws": 257}, "semantic_audit.mixture_draws"),
        ({"mixture_draws": True}, "semantic_audit.mixture_draws"),
        (3, "semantic_audit"),
    ],
)
def test_bad_settings_name_the_field(raw: object, param: str) -> None:
    with pytest.raises(InvalidParameter) as caught:
        parse_audit_settings(raw)
    assert caught.value.details == {"param": param}


def test_the_seed_defaults_to_the_series_seed() -> None:
    assert AuditSettings().audit_params(11).seed == 11
    assert AuditSettings(seed=3).audit_params(11).seed == 3


def test_published_background_is_rows_with_their_clusters_private_terms(
    published: Published,
) -> None:
    _, publication = published
    background = published_background([publication.release])
    assert len(background) == publication.release.n_rows
    first = publication.release.clusters[0]
    assert background[0] == [*first.rows[0], *sorted(first.private_terms())]


def test_content_tracing_finds_what_individuals_find(published: Published) -> None:
    corpus, publication = published
    anonymous = [Transaction(t.terms) for t in corpus]
    traced, ledger, _ = trace_by_content(anonymous, publication.release, publication.ledger)
    by_individual = {t.individual: t for t in corpus}
    for exact, found in zip(publication.ledger.clusters, ledger.clusters, strict=True):
        for key, synthetic in zip(exact.individuals, found.individuals, strict=True):
            assert (key is None) == (synthetic is None)
            if key is not None:
                # The same public part (equal rows are interchangeable) and, since this world's
                # rows hold their private terms apart, usually the very transaction.
                position = int(synthetic[1:])
                assert (by_individual[key].terms - PRIVATE) == (traced[position].terms - PRIVATE)


def test_a_corpus_that_is_not_the_release_s_is_refused(published: Published) -> None:
    _, publication = published
    with pytest.raises(InvalidCorpus):
        trace_by_content(world(50, 9), publication.release, publication.ledger)


def test_the_report_holds_aggregates_only(published: Published) -> None:
    corpus, publication = published
    background = [sorted(t.terms) for t in world(400, 6)]
    report = audit_report(
        corpus,
        publication.release,
        publication.ledger,
        background,
        AuditSettings(enabled=True),
        method="sanony",
    )
    assert report["status"] == "done" and report["tracing"] == "individuals"
    assert sorted(report["private_copies"]) == ["aba-ngd", "mra-ngd", "random", "rga-ngd"]
    text = json.dumps(report, allow_nan=False)  # JSONB takes no NaN
    vocabulary = {term for t in corpus for term in t.terms}
    assert not [term for term in vocabulary if f'"{term}"' in text]
    assert report["best"]["share"] > report["private_copies"]["random"]["random_expected"]
    # Without individuals the same audit runs, traced by content.
    anonymous = [Transaction(t.terms) for t in corpus]
    again = audit_report(
        anonymous,
        publication.release,
        publication.ledger,
        background,
        AuditSettings(enabled=True),
        method="sanony",
    )
    assert again["tracing"] == "content"
    assert (
        again["private_copies"]["random"]["copies"] == report["private_copies"]["random"]["copies"]
    )


@pytest.mark.parametrize(
    ("background", "method", "reason"),
    [
        ([], "sanony", "no_background"),
        ([["a"]], "segen", "method_not_supported"),
        # A disassociated release is scored against the publisher's result, not given here.
        ([["a"]], "disassociation", "no_ground_truth"),
    ],
)
def test_skipped(
    published: Published, background: list[list[str]], method: str, reason: str
) -> None:
    corpus, publication = published
    report = audit_report(
        corpus,
        publication.release,
        publication.ledger,
        background,
        AuditSettings(enabled=True),
        method=method,
    )
    assert (report["status"], report["reason"]) == ("skipped", reason)

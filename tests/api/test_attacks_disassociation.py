"""The semantic audit of a disassociation series over HTTP (design.md §11): each job
reassociates the chunks it published and keeps accuracy and breakage for auditors."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from app.core.attacks.release_audit import chunk_report, published_background
from app.core.attacks.settings import parse_audit_settings
from app.core.disassociation import DisassociationParams
from app.core.disassociation.model import DisassociatedRelease, Disassociation
from app.core.disassociation.publish import publish_disassociation
from app.core.history import SeriesHistory
from app.core.model import PublishedRelease, Transaction
from tests.api.conftest import ADMIN, create_key, create_series, wait_job
from tests.core.attacks.topics import MIXED, mixed_clusters

pytestmark = [pytest.mark.anyio, pytest.mark.db]

AUDIT = {"selection": ["aba", "mra"]}
PARAMS: dict[str, Any] = {"k": 2, "m": 2, "max_cluster_size": 10, "semantic_audit": AUDIT}
ATTACKS = {"aba-ngd", "mra-ngd", "aba+update-ngd", "mra+update-ngd", "random"}


def _body(corpus: list[Transaction]) -> dict[str, Any]:
    return {
        "transactions": [
            {"terms": sorted(t.terms), "individual": t.individual, "cluster": t.cluster}
            for t in corpus
        ]
    }


def _layout(document: dict[str, Any]) -> PublishedRelease:
    """A release as an analyst reads it, back in the core's types."""
    return PublishedRelease(
        release_no=document["release_no"],
        clusters=[],
        global_bag={},
        population_rates={},
        layout=DisassociatedRelease.from_json(document),
    )


async def test_each_job_reassociates_its_chunks(client: httpx.AsyncClient) -> None:
    await create_series(client, "chunks", method="disassociation", params=PARAMS)
    publisher = await create_key(client, "publisher", "chunks")
    auditor = await create_key(client, "auditor", "chunks")
    corpora = [mixed_clusters(100, seed) for seed in (1, 2)]
    published: list[PublishedRelease] = []
    for number, corpus in enumerate(corpora, start=1):
        posted = await client.post(
            "/v1/series/chunks/releases", headers=publisher, json=_body(corpus)
        )
        assert posted.status_code == 202, posted.text
        job = await wait_job(client, posted.json()["id"], ADMIN)
        assert job["status"] == "succeeded", job
        assert job["phase_seconds"]["attack"] >= 0
        document = (
            await client.get(f"/v1/series/chunks/releases/{number}", headers=auditor)
        ).json()
        published.append(_layout(document))
        response = await client.get(f"/v1/series/chunks/releases/{number}/attacks", headers=auditor)
        assert response.status_code == 200, response.text
        report = response.json()
        assert (report["status"], report["reason"]) == ("done", None)
        assert report["private_copies"] is None and report["best"] is None
        assert set(report["reassociation"]) == ATTACKS
        # The background is every layout published up to this release.
        assert report["background_transactions"] == len(published_background(published))
        facts = report["disassociation"]
        assert (facts["k"], facts["m"], facts["records"], facts["clusters"]) == (2, 2, 100, 10)
        assert facts["tlost"] == pytest.approx(job["report"]["tlost"], abs=1e-6)
        assert report["rows"] == 100
        # Two topics share each cluster: the attack puts back more than random placement.
        best, random_run = report["best_reassociation"], report["reassociation"]["random"]
        assert best["attack"] in ATTACKS - {"random"}
        assert best["accuracy"] > random_run["accuracy"]
        assert best["lift_over_random"] == pytest.approx(
            best["accuracy"] / random_run["accuracy"], rel=1e-3
        )
        # The job scored against the very result it published: the same numbers as the
        # core's, recomputed from the snapshot and what analysts can read.
        expected = _recomputed(corpus, published)["reassociation"]
        for attack, measured in report["reassociation"].items():
            assert measured == pytest.approx(expected[attack]), attack
        # Aggregates only: no term of the corpus is in the report.
        vocabulary = {term for terms in MIXED.values() for term in terms}
        assert not [term for term in vocabulary if f'"{term}"' in response.text]
    listed = (await client.get("/v1/series/chunks/releases", headers=auditor)).json()
    assert [(r["n_rows"], r["n_clusters"]) for r in listed] == [(100, 10), (100, 10)]
    for role in ("analyst", "publisher"):
        denied = await client.get(
            "/v1/series/chunks/releases/1/attacks", headers=await create_key(client, role)
        )
        assert denied.status_code == 403


def _recomputed(corpus: list[Transaction], published: list[PublishedRelease]) -> dict[str, Any]:
    params = DisassociationParams(k=2, m=2, max_cluster_size=10)
    publication = publish_disassociation(SeriesHistory(), corpus, frozenset(), params)
    assert publication.release.layout == published[-1].layout
    return chunk_report(
        corpus,
        publication.release,
        publication.extra(Disassociation),
        published_background(published),
        parse_audit_settings(AUDIT),
    )


async def test_the_openapi_example_shows_a_disassociation_report(
    client: httpx.AsyncClient,
) -> None:
    schemas = (await client.get("/openapi.json")).json()["components"]["schemas"]
    report = schemas["AttackReportOut"]
    assert {"reassociation", "best_reassociation", "disassociation"} <= set(report["properties"])
    examples = report["examples"]
    assert examples[1]["best_reassociation"]["lift_over_random"] > 1
    assert "tlost" in schemas["DisassociationAuditOut"]["properties"]

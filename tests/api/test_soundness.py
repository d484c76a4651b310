"""Over HTTP: the service's risk equals the oracle's on every row (design.md §4).

A hard series (a popular set in every release, private-only rows, a new and a returning term;
``tests/core/perturbation/test_soundness_properties``) is published through the API; the
releases are read back as an analyst reads them and judged by the exact oracle, which shares no
code with the service. Suppressed copies are reported to the publisher and auditors, never in
the release.
"""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import httpx
import pytest

from app.core.errors import PublicationFailed
from app.core.history import SeriesHistory
from app.core.model import PublishedCluster, PublishedRelease, Transaction
from app.core.params import parse_params
from app.core.pipeline import publish
from tests.api.conftest import ADMIN, create_key, create_series
from tests.api.paper import body
from tests.core.series_strategies import build_series, inject_hard_cases
from tests.oracle.serial_risk import row_risks, violations

pytestmark = [pytest.mark.anyio, pytest.mark.db]


def _series(trial: int) -> tuple[list[list[list[str]]], list[str], float]:
    rng = random.Random(trial)
    base = build_series(
        seed=trial,
        releases=4,
        sizes=[rng.randint(20, 40) for _ in range(4)],
        n_private=2,
        n_public=6,
        r_th=rng.uniform(1.5, 3),
        cluster_size=3,
    )
    series = inject_hard_cases(base, trial, 0.3)
    corpora = [[sorted(t.terms) for t in corpus] for corpus in series.corpora]
    return corpora, sorted(series.private_terms), series.r_th


def _params(r_th: float) -> dict[str, Any]:
    return {"r_th": r_th, "cluster_size": 3, "seed": 1, "max_suppression": 0.25}


def _core_suppressed(trial: int) -> int | None:
    """Copies the core suppresses publishing the series, or None when it refuses one."""
    corpora, private, r_th = _series(trial)
    params, history, total = parse_params("sanony", _params(r_th)), SeriesHistory(), 0
    try:
        for corpus in corpora:
            found = publish(
                "sanony", history, [Transaction.of(t) for t in corpus], frozenset(private), params
            )
            history.releases.append(found.release)
            total += sum(found.ledger.suppressed.values())
    except PublicationFailed:
        return None
    return total


def _hard_trial() -> tuple[int, int]:
    """The first series of the generator that publishes with suppressed copies (the core's
    count, which the service must reproduce)."""
    for trial in range(40):
        found = _core_suppressed(trial)
        if found:
            return trial, found
    raise AssertionError("no series of the generator needs suppression")


def _release(document: dict[str, Any]) -> PublishedRelease:
    """The analyst's JSON as the oracle's input (rows as canonical tuples)."""
    return PublishedRelease(
        release_no=document["release_no"],
        clusters=[
            PublishedCluster(
                c["cluster_id"],
                [tuple(sorted(r)) for r in c["rows"]],
                dict(c["private_terms"]),
                dict(c["global_share"]),
                c["counterfeits"],
            )
            for c in document["clusters"]
        ],
        global_bag=dict(document["global_bag"]),
        population_rates=dict(document["population_rates"]),
    )


async def test_service_risk_equals_the_oracle_on_every_row(client: httpx.AsyncClient) -> None:
    trial, expected = _hard_trial()
    corpora, private, r_th = _series(trial)
    params = _params(r_th)
    await create_series(client, name="hard", private_terms=private, params=params)
    publisher = await create_key(client, "publisher", "hard")
    analyst = await create_key(client, "analyst")
    suppressed = 0
    for number, corpus in enumerate(corpora, start=1):
        posted = await client.post(
            "/v1/series/hard/releases?wait=true",
            json={"label": f"y{number}", "transactions": [{"terms": t} for t in corpus]},
            headers=publisher,
        )
        assert posted.status_code == 201, posted.text
        assert posted.json()["risk"]["suppressed"] is None  # the risk summary's is private
        job = await client.get(f"/v1/jobs/{posted.json()['job']['id']}", headers=publisher)
        assert job.json()["report"] is None  # the mechanism's report is for auditors
        suppressed += sum(job.json()["suppressed"].values())
    assert suppressed == expected
    documents = [
        (await client.get(f"/v1/series/hard/releases/{no}", headers=analyst)).json()
        for no in range(1, len(corpora) + 1)
    ]
    assert all("suppressed" not in str(d.keys()) for d in documents)
    releases = [_release(d) for d in documents]
    assert violations(releases, r_th) == []
    exact = row_risks(releases)
    for position, document in enumerate(documents):
        page = await client.get(
            f"/v1/series/hard/releases/{document['release_no']}/risk/rows?limit=10000",
            headers=ADMIN,
        )
        rows = page.json()["rows"]
        expected = [
            exact[position, c["cluster_id"], i][0]
            for c in document["clusters"]
            for i in range(len(c["rows"]))
        ]
        assert len(rows) == len(expected)
        for row, risk in zip(rows, expected, strict=True):
            assert row["serial_risk"] == pytest.approx(float(risk), rel=1e-9, abs=1e-12)
            assert Fraction(row["serial_risk"]) <= Fraction(r_th) + Fraction(1, 10**9)
    summary = await client.get("/v1/series/hard/risk", headers=ADMIN)
    assert sum(sum(r["suppressed"].values()) for r in summary.json()) == suppressed
    in_ledgers = in_clusters = 0
    for document in documents:
        ledger = (
            await client.get(
                f"/v1/series/hard/releases/{document['release_no']}/ledger", headers=ADMIN
            )
        ).json()
        in_ledgers += sum(ledger["suppressed"].values())
        in_clusters += sum(sum(c["suppressed"].values()) for c in ledger["clusters"])
    assert in_ledgers == suppressed and in_clusters <= suppressed


async def test_ledger_flags_the_counterfeits_for_auditors_only(
    client: httpx.AsyncClient,
) -> None:
    await create_series(client)  # the paper's example, in the paper's mode: BP adds rows
    publisher = await create_key(client, "publisher", "prison-health")
    for number in (1, 2, 3):
        posted = await client.post(
            "/v1/series/prison-health/releases?wait=true", json=body(number), headers=publisher
        )
        assert posted.status_code == 201, posted.text
    auditor = await create_key(client, "auditor")
    total = 0
    for number in (1, 2, 3):
        ledger = await client.get(
            f"/v1/series/prison-health/releases/{number}/ledger", headers=auditor
        )
        assert ledger.status_code == 200, ledger.text
        public = (
            await client.get(f"/v1/series/prison-health/releases/{number}", headers=auditor)
        ).json()
        for cluster, book in zip(public["clusters"], ledger.json()["clusters"], strict=True):
            assert book["cluster_id"] == cluster["cluster_id"]
            assert len(book["counterfeit"]) == len(cluster["rows"])
            assert sum(book["counterfeit"]) == book["bp"] + book["fp1"] + book["fp2"]
            # Per cluster BP + FP1's (design.md §3); every counterfeit row in the total.
            assert cluster["counterfeits"] == book["bp"] + book["fp1"]
            total += sum(book["counterfeit"])
        books = ledger.json()["clusters"]
        assert public["counterfeit_rows"] == sum(sum(book["counterfeit"]) for book in books)
    assert total > 0  # Example 11: BP adds a counterfeit to release 2
    for role in ("analyst", "publisher"):
        denied = await client.get(
            "/v1/series/prison-health/releases/2/ledger", headers=await create_key(client, role)
        )
        assert denied.status_code == 403
    missing = await client.get("/v1/series/prison-health/releases/9/ledger", headers=auditor)
    assert missing.status_code == 404

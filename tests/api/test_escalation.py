"""Through the API: a release published only by escalating says so."""

from __future__ import annotations

import httpx
import pytest

from tests.api.conftest import create_key, create_series
from tests.core.series_strategies import rising_term_series

pytestmark = [pytest.mark.anyio, pytest.mark.db]

#: No suppression budget and two repair rounds: release 2's rising term can only go beyond
#: the budget (tests/core/perturbation/test_escalation.py).
#: The paper's mechanism: its repair, its budget and its escalation ladder.
PARAMS = {
    "guarantee": "paper",
    "r_th": 2,
    "cluster_size": 4,
    "max_suppression": 0,
    "suppression_floor": 0,
    "max_repair_rounds": 2,
}


async def _post(client: httpx.AsyncClient, name: str, on_infeasible: str) -> list[httpx.Response]:
    corpora, private = rising_term_series()
    params = {**PARAMS, "on_infeasible": on_infeasible}
    series = await create_series(client, name=name, private_terms=sorted(private), params=params)
    assert series["params"]["on_infeasible"] == on_infeasible
    publisher = await create_key(client, "publisher", name)
    responses = []
    for number, corpus in enumerate(corpora, start=1):
        responses.append(
            await client.post(
                f"/v1/series/{name}/releases?wait=true",
                json={
                    "label": f"y{number}",
                    "transactions": [{"terms": sorted(t.terms)} for t in corpus],
                },
                headers=publisher,
            )
        )
    return responses


async def test_an_escalated_release_is_published_with_a_warning(client: httpx.AsyncClient) -> None:
    first, second = await _post(client, "escalates", "escalate")
    assert first.status_code == 201, first.text
    assert all(w["code"] != "escalated" for w in first.json()["warnings"])
    assert second.status_code == 201, second.text
    warning = next(w for w in second.json()["warnings"] if w["code"] == "escalated")
    assert warning["step"] == "suppression_beyond_budget"
    assert "beyond the budget (X)" in warning["message"]


async def test_refuse_refuses_and_stores_nothing(client: httpx.AsyncClient) -> None:
    first, second = await _post(client, "refuses", "refuse")
    assert first.status_code == 201, first.text
    assert second.status_code != 201
    assert "publication_failed" in second.text

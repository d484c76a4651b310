"""README's walkthrough with the shipped example corpus (examples/), over HTTP."""

from __future__ import annotations

import json
import re

import httpx
import pytest

from tests.api.conftest import ADMIN, create_key
from tests.support.database import ROOT

pytestmark = [pytest.mark.anyio, pytest.mark.db]


def _walkthrough() -> tuple[dict[str, object], list[str]]:
    """The series body and the example files README's walkthrough posts."""
    readme = (ROOT / "README.md").read_text()
    series = re.search(r"-d '(\{\"name\": \"prison-health\".*?\})'", readme, re.S)
    assert series, "README's walkthrough creates the series prison-health"
    years = re.search(r"for year in ([\d ]+); do", readme)
    assert years, "README's walkthrough posts the example years in a loop"
    assert "--data-binary @examples/prison-$year.dat" in readme
    return json.loads(series.group(1)), years.group(1).split()


async def test_readme_walkthrough_publishes_the_example_corpus(client: httpx.AsyncClient) -> None:
    series, years = _walkthrough()
    assert (await client.post("/v1/series", json=series, headers=ADMIN)).status_code == 201
    publisher = await create_key(client, "publisher", "prison-health")
    for number, year in enumerate(years, start=1):
        corpus = (ROOT / "examples" / f"prison-{year}.dat").read_bytes()
        response = await client.post(
            f"/v1/series/prison-health/releases?wait=true&label={year}",
            content=corpus,
            headers={**publisher, "Content-Type": "text/plain"},
        )
        assert response.status_code == 201, response.text
        assert response.json()["release"]["release_no"] == number
        risk = response.json()["risk"]
        assert risk["max_serial_risk"] <= risk["r_th"] + 1e-9

"""A release's ledger reads as the same bytes whoever holds it: the process that published it
(its compute child's ledger, kept in memory) and any later read (from PostgreSQL).

Before, the two orders of the same JSON differed: the child's objects kept the order the core
built them in (``{"source", "secret"}``), PostgreSQL's JSONB its own (shorter keys first), so
an auditor's digest of the ledger changed once the process' copy was gone.
"""

from __future__ import annotations

import json

import httpx
import pytest

from app.db.repositories.release_load import RELEASE_CACHE
from tests.api.conftest import PAPER_PARAMS, create_key, create_series
from tests.api.paper import body

pytestmark = [pytest.mark.anyio, pytest.mark.db]

URL = "/v1/series/prison-health/releases"
UNSEEDED = {k: v for k, v in PAPER_PARAMS.items() if k != "seed"}


def _keys_sorted(value: dict[str, object]) -> bool:
    return list(value) == sorted(value)


async def test_the_ledger_reads_as_the_same_bytes_before_and_after_the_process_copy(
    client: httpx.AsyncClient,
) -> None:
    await create_series(client, params=UNSEEDED)
    publisher = await create_key(client, "publisher", "prison-health")
    auditor = await create_key(client, "auditor")
    for release in (1, 2):
        posted = await client.post(f"{URL}?wait=true", json=body(release), headers=publisher)
        assert posted.status_code == 201, posted.text
    # Release 2's ledger is the publishing process' own (its job put it in the cache).
    published = await client.get(f"{URL}/2/ledger", headers=auditor)
    assert published.status_code == 200, published.text
    RELEASE_CACHE.clear()
    read = await client.get(f"{URL}/2/ledger", headers=auditor)
    assert read.status_code == 200, read.text
    assert published.content == read.content
    document = json.loads(read.content)
    assert document["randomness"]["source"] == "secret"
    # The maps in sorted order (the fields in the schema's).
    maps = ("randomness", "suppressed", "global_bag_counterfeits")
    assert all(_keys_sorted(document[name]) for name in maps)
    assert all(_keys_sorted(cluster["suppressed"]) for cluster in document["clusters"])
    # And a second read from PostgreSQL reads the same again.
    RELEASE_CACHE.clear()
    again = await client.get(f"{URL}/2/ledger", headers=auditor)
    assert again.content == read.content

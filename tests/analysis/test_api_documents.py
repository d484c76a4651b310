"""The service's own release documents, read by the reader (the paper's example over HTTP).

The reader's HTTP client is synchronous and the app is served in-process by an async
client: the documents are fetched with the analyst's key, then served to ``load_series``
unchanged by a mock transport.
"""

from __future__ import annotations

import httpx
import pytest

from app.analysis.estimates import term_count
from app.analysis.reader import load_series
from app.analysis.reconstruct import reconstruct
from tests.api.conftest import create_key, create_series
from tests.api.paper import CORPORA, PRIVATE, body

pytestmark = [pytest.mark.anyio, pytest.mark.db]


async def test_the_service_s_releases_load(client: httpx.AsyncClient) -> None:
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    analyst = await create_key(client, "analyst")
    for release in (1, 2, 3):
        posted = await client.post(
            "/v1/series/prison-health/releases?wait=true", json=body(release), headers=publisher
        )
        assert posted.status_code == 201, posted.text
    served: dict[str, httpx.Response] = {}
    for path in ["/v1/series/prison-health/releases"] + [
        f"/v1/series/prison-health/releases/{no}" for no in (1, 2, 3)
    ]:
        response = await client.get(path, headers=analyst)
        assert response.status_code == 200, response.text
        served[path] = httpx.Response(200, content=response.content)
    key = analyst["Authorization"].removeprefix("Bearer ")

    def handler(request: httpx.Request) -> httpx.Response:
        assert request.headers["authorization"] == f"Bearer {key}"
        return served[request.url.path]

    releases = load_series(
        "http://service.test/v1/series/prison-health",
        key=key,
        transport=httpx.MockTransport(handler),
    )
    assert [r.release_no for r in releases] == [1, 2, 3]
    assert releases[0].n_rows == 6 and releases[0].label == "2023"
    assert releases[2].earlier_private_copies is not None
    for release, corpus in zip(releases, CORPORA, strict=True):
        rows = [terms for cluster in corpus.values() for terms in cluster]
        for s in PRIVATE:
            assert term_count(release, s).contains(sum(s in terms for terms in rows))
        assert len(reconstruct(release, 1)) == release.n_rows

"""``serialpub demo`` posts each snapshot with an Idempotency-Key and sends it again after a
503 (the service's database restarting): the retry gets the same release, never a second."""

from __future__ import annotations

from typing import Any

import pytest

from app import demo

pytestmark = [pytest.mark.anyio]

_RELEASE = {"release_no": 1, "n_rows": 4, "n_clusters": 2, "counterfeits": 0}
_RISK = {
    "max_serial_risk": 1.0,
    "r_th": 2.0,
    "guarantee": {"name": "true_rows", "promise": "every row is a true row", "assumes": None},
}


class _Service:
    """Answers the demo's calls as the service would, the first post of each snapshot with a
    503 (``Retry-After: 0``); records every request."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self._refused: set[str] = set()

    async def request(
        self,
        method: str,
        url: str,
        *,
        headers: dict[str, str],
        json_body: Any = None,
        content: str | None = None,
    ) -> tuple[int, Any, float | None]:
        self.requests.append((method, url, dict(headers)))
        if method == "POST" and "/releases" in url:
            key = headers.get("Idempotency-Key", "")
            if key not in self._refused:
                self._refused.add(key)
                error = {"code": "database_unavailable", "message": "", "details": {}}
                return 503, {"error": error}, 0.0
            return 201, {"release": _RELEASE, "risk": _RISK}, None
        if url == "/v1/series":
            return 201, {"method": "sanony", "params": {}}, None
        if url == "/v1/keys":
            return 201, {"key": "k", "id": "i"}, None
        if url.endswith("/risk"):
            return 200, [], None
        return 200, {"clusters": [{"cluster_id": "c1", "rows": [], "private_terms": {}}]}, None


async def test_each_post_carries_a_key_and_a_503_is_sent_again_with_it() -> None:
    service = _Service()
    said: list[str] = []
    await demo._steps(service, {"Authorization": "Bearer a"}, said.append, 2)  # type: ignore[arg-type]
    posts = [(url, h) for method, url, h in service.requests if "/releases?" in url]
    assert len(posts) == 4  # two snapshots, each refused once
    keys = [h.get("Idempotency-Key") for _, h in posts]
    assert keys[0] == keys[1] and keys[2] == keys[3] and keys[0] != keys[2]
    assert all(keys)
    assert any("trying again" in line for line in said)

"""A refused upload is answered with its error body while the client is still sending.

Against a real uvicorn server on a free port (both of its HTTP implementations), a client
streaming a large body in chunks reads the 413 or 422 JSON that names the cap, not a reset;
the middleware that drains the body's rest (:mod:`app.api.drain`) is also tested alone.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from app.api.drain import DrainUnreadBody
from app.api.main import create_app
from app.settings import Settings
from tests.api.conftest import ADMIN, create_series

pytestmark = [pytest.mark.anyio]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(params=["httptools", "h11"])
def live_server(request: pytest.FixtureRequest, settings: Settings) -> Iterator[str]:
    """The service under uvicorn in a thread: 200,000 body bytes, 1,000 transactions."""
    live = settings.model_copy(update={"in_process_worker": False, "max_transactions": 1_000})
    port = _free_port()
    config = uvicorn.Config(
        create_app(live), host="127.0.0.1", port=port, http=request.param, log_level="warning"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def _lines(count: int, width: int = 2) -> Iterator[bytes]:
    """``count`` lines of ``width`` terms, 256 lines a chunk."""
    tail = b" ".join(b"u%d" % i for i in range(1, width))
    for first in range(0, count, 256):
        yield b"".join(b"t%d %s\n" % (k % 97, tail) for k in range(first, min(first + 256, count)))


def _post(base: str, content: Any) -> httpx.Response:
    with httpx.Client(base_url=base, timeout=60) as http:
        return http.post(
            "/v1/series/prison-health/releases",
            content=content,
            headers={**ADMIN, "Content-Type": "text/plain"},
        )


async def test_a_body_past_the_byte_cap_gets_413_not_a_reset(
    client: httpx.AsyncClient, live_server: str
) -> None:
    await create_series(client)
    # 3.9 MB in chunks, no Content-Length: refused at 200,000 bytes (line 52 of 1,000),
    # the rest still coming.
    response = await asyncio.to_thread(_post, live_server, _lines(1_000, width=1_000))
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"
    assert response.json()["error"]["details"]["limit"] == 200_000


async def test_a_content_length_past_the_cap_gets_413_not_a_reset(
    client: httpx.AsyncClient, live_server: str
) -> None:
    await create_series(client)
    # Refused on its Content-Length before a byte of the 3.3 MB is read.
    response = await asyncio.to_thread(_post, live_server, b"".join(_lines(400_000)))
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"


async def test_a_body_past_a_row_cap_gets_422_naming_it_and_nothing_is_stored(
    client: httpx.AsyncClient, live_server: str, session: AsyncSession
) -> None:
    await create_series(client)
    # 5,000 lines (within the byte cap) against a cap of 1,000 transactions.
    response = await asyncio.to_thread(_post, live_server, _lines(5_000))
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["details"]["line"] == 1_001
    assert "SERIALPUB_MAX_TRANSACTIONS" in error["message"]
    listed = await client.get("/v1/series/prison-health/releases", headers=ADMIN)
    assert listed.json() == []
    assert (await session.execute(text("SELECT count(*) FROM jobs"))).scalar_one() == 0


# -- the middleware alone -------------------------------------------------------------------


class _Client:
    """An ASGI ``receive`` giving ``chunks`` body messages (``None``: for ever)."""

    def __init__(self, chunks: int | None, size: int = 1000) -> None:
        self.chunks, self.size, self.sent = chunks, size, 0

    async def receive(self) -> dict[str, Any]:
        self.sent += 1
        more = self.chunks is None or self.sent < self.chunks
        return {"type": "http.request", "body": b"x" * self.size, "more_body": more}


async def _refuse_at_once(scope: Any, receive: Any, send: Any) -> None:
    """An app answering 413 after reading one body message."""
    await receive()
    await send({"type": "http.response.start", "status": 413, "headers": []})
    await send({"type": "http.response.body", "body": b"{}"})


async def _run(app: Any, client: _Client, headers: list[tuple[bytes, bytes]]) -> list[int]:
    """The number of body messages received when each message was sent."""
    seen: list[int] = []

    async def send(message: dict[str, Any]) -> None:
        seen.append(client.sent)

    scope = {"type": "http", "method": "POST", "headers": headers}
    await app(scope, client.receive, send)
    return seen


async def test_the_rest_of_the_body_is_read_before_the_answer_starts() -> None:
    client = _Client(chunks=500)
    seen = await _run(DrainUnreadBody(_refuse_at_once, limit=10**6), client, [])
    assert seen == [500, 500]


async def test_draining_stops_at_its_byte_bound() -> None:
    client = _Client(chunks=None)
    seen = await _run(DrainUnreadBody(_refuse_at_once, limit=50_000), client, [])
    assert 50 <= seen[0] <= 53


async def test_draining_stops_at_its_time_bound() -> None:
    async def silent() -> dict[str, Any]:
        await asyncio.sleep(60)
        raise AssertionError("unreachable")

    async def refuse_unread(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 401, "headers": []})

    sent: list[str] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message["type"])

    started = time.monotonic()
    app = DrainUnreadBody(refuse_unread, limit=10**6, seconds=0.2)
    await app({"type": "http", "method": "POST", "headers": []}, silent, send)
    assert sent == ["http.response.start"]
    assert time.monotonic() - started < 5


async def test_a_client_waiting_for_100_continue_is_answered_without_being_read() -> None:
    async def refuse_unread(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 413, "headers": []})

    client = _Client(chunks=500)
    seen = await _run(
        DrainUnreadBody(refuse_unread, limit=10**6), client, [(b"expect", b"100-continue")]
    )
    assert seen == [0]


async def test_reads_pass_straight_through() -> None:
    calls: list[Any] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        calls.append(receive)

    async def receive() -> dict[str, Any]:
        raise AssertionError("not read")

    await DrainUnreadBody(app, limit=1)({"type": "http", "method": "GET"}, receive, None)  # type: ignore[arg-type]
    assert calls == [receive]

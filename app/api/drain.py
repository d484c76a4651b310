"""An answer given before the request's body was read: the rest of the body is read first.

A refused upload (413 past ``SERIALPUB_MAX_BODY_BYTES``, 422 past a cap at line N, 401, 415…)
is answered while the client is still sending. Whether it then reads the answer depends on
the HTTP server underneath: one that closes the connection with bytes left unread makes the
kernel send a TCP reset, and a client still writing sees "connection reset" instead of the
error that names what is wrong. This pure ASGI middleware reads and discards what is left of
the body before the answer starts, so the connection stays in step whatever the server does.

Draining is bounded, in bytes and in seconds: a client sending without end gets the answer
once either bound is reached (and the server may then close the connection). Nothing drained
is kept; memory stays flat. A request announcing ``Expect: 100-continue`` whose body was never
asked for is not drained: the client has sent nothing and, told the answer, sends nothing.
"""

from __future__ import annotations

import asyncio
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["DrainUnreadBody"]

#: Methods whose requests may carry a body; the read path (GET, HEAD) passes straight through.
_WITH_BODY = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class DrainUnreadBody:
    """Reads what is left of a request's body (up to ``limit`` bytes, for up to ``seconds``)
    before its answer starts."""

    def __init__(self, app: ASGIApp, limit: int, seconds: float = 60.0) -> None:
        self.app = app
        self.limit = limit
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") not in _WITH_BODY:
            await self.app(scope, receive, send)
            return
        # ``ended``: the last body message was received (or the client went away);
        # ``started``: the app asked for the body at least once.
        ended = False
        started = False

        async def tracked() -> Message:
            nonlocal ended, started
            started = True
            message = await receive()
            if message["type"] != "http.request" or not message.get("more_body", False):
                ended = True
            return message

        async def draining_send(message: Message) -> None:
            nonlocal ended
            if message["type"] == "http.response.start" and not ended:
                if started or not _expects_continue(scope):
                    ended = await self._drain(tracked)
            await send(message)

        await self.app(scope, tracked, draining_send)

    async def _drain(self, receive: Receive) -> bool:
        """Read and drop the body's rest; whether it ended within the bounds."""
        deadline = time.monotonic() + self.seconds
        dropped = 0
        while dropped <= self.limit:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                message = await asyncio.wait_for(receive(), left)
            except TimeoutError:
                return False
            if message["type"] != "http.request":
                return True
            dropped += len(message.get("body", b""))
            if not message.get("more_body", False):
                return True
        return False


def _expects_continue(scope: Scope) -> bool:
    for name, value in scope.get("headers", ()):
        if name == b"expect":
            return bytes(value).lower() == b"100-continue"
    return False

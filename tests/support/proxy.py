"""A small TCP proxy in front of PostgreSQL whose connections a test can cut.

What a dropped network path, a load balancer's idle cut or a failover's address move does to
the service's open connections: the proxy closes every connection it carries (both ends, at
once) while the server itself stays up, and keeps accepting new ones. It runs its own event
loop in a thread, so that sync and async tests alike can use it.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import threading
from collections.abc import Iterator

__all__ = ["TcpProxy", "running_proxy"]


class TcpProxy:
    """Forwards 127.0.0.1:``port`` to ``target`` (``(host, port)``, or a Unix socket path)."""

    def __init__(self, target: tuple[str, int] | str) -> None:
        self.target = target
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self.connections = 0

    def start(self) -> None:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._listen(), self._loop).result(timeout=10)

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = int(self._server.sockets[0].getsockname()[1])

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if isinstance(self.target, str):
            return await asyncio.open_unix_connection(self.target)
        return await asyncio.open_connection(*self.target)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            upstream_reader, upstream_writer = await self._open()
        except OSError:
            writer.close()
            return
        self.connections += 1
        pair = {writer, upstream_writer}
        self._writers |= pair
        try:
            await asyncio.gather(
                self._pipe(reader, upstream_writer), self._pipe(upstream_reader, writer)
            )
        finally:
            self._writers -= pair
            for end in pair:
                end.close()

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.CancelledError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        with contextlib.suppress(OSError):
            writer.close()

    def cut(self) -> int:
        """Reset every connection the proxy carries (an RST to both ends); returns how many
        ends were cut. New connections are accepted as before."""
        return asyncio.run_coroutine_threadsafe(self._cut(), self._loop).result(timeout=10)

    async def _cut(self) -> int:
        ends = list(self._writers)
        for writer in ends:
            sock = writer.get_extra_info("socket")
            if sock is not None and sock.family != socket.AF_UNIX:
                # SO_LINGER 0: close() sends RST, what a dropped path looks like to libpq.
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
        self._writers.clear()
        return len(ends)

    def close(self) -> None:
        async def stop() -> None:
            if self._server is not None:
                self._server.close()
            await self._cut()

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)


@contextlib.contextmanager
def running_proxy(target: tuple[str, int] | str) -> Iterator[TcpProxy]:
    proxy = TcpProxy(target)
    proxy.start()
    try:
        yield proxy
    finally:
        proxy.close()

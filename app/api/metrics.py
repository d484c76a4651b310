"""A pure ASGI middleware counting requests by route template (bounded label values)."""

from __future__ import annotations

import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.observability import REQUEST_SECONDS, REQUESTS

__all__ = ["MetricsMiddleware"]


class MetricsMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            route = scope.get("route")
            path = getattr(route, "path", "unmatched")
            method = scope.get("method", "GET")
            REQUESTS.labels(method, path, str(status)).inc()
            REQUEST_SECONDS.labels(method, path).observe(time.perf_counter() - started)

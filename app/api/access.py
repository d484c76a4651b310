"""Recording the access trail (:mod:`app.services.access_trail`) around every request.

The key's dependencies (:mod:`app.api.deps`) leave the authenticated caller in the request's
scope; once the response has started, this pure ASGI middleware turns the route that answered
and its status into an event in this process' buffer. Nothing here waits for the database,
so the read path pays a dictionary lookup and an append.
"""

from __future__ import annotations

import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.services.access_trail import TRAIL, AccessAction, Event
from app.services.auth import Principal

__all__ = ["AccessTrailMiddleware", "ROUTE_ACTIONS", "note", "PRINCIPAL"]

#: Where the key's dependencies leave the caller (:func:`app.api.deps.get_principal`).
PRINCIPAL = "serialpub.principal"
#: Where a route leaves what else identifies the operation (:func:`note`).
_DETAILS = "serialpub.access_details"

_SERIES = "/v1/series/{name}"
_RELEASE = f"{_SERIES}/releases/{{release_no}}"

#: (method, route template) -> action; a route not listed here is not recorded.
ROUTE_ACTIONS: dict[tuple[str, str], AccessAction] = {
    ("POST", f"{_SERIES}/releases"): AccessAction.RELEASE_PUBLISH,
    ("GET", f"{_SERIES}/releases"): AccessAction.RELEASE_LIST,
    ("GET", _RELEASE): AccessAction.RELEASE_READ,
    ("HEAD", _RELEASE): AccessAction.RELEASE_READ,
    ("POST", f"{_RELEASE}/withdraw"): AccessAction.RELEASE_WITHDRAW,
    ("GET", f"{_RELEASE}/risk"): AccessAction.RISK_READ,
    ("HEAD", f"{_RELEASE}/risk"): AccessAction.RISK_READ,
    ("GET", f"{_RELEASE}/risk/rows"): AccessAction.RISK_READ,
    ("GET", f"{_SERIES}/risk"): AccessAction.RISK_READ,
    ("GET", f"{_RELEASE}/cover"): AccessAction.COVER_READ,
    ("GET", f"{_RELEASE}/ledger"): AccessAction.LEDGER_READ,
    ("GET", f"{_SERIES}/statistics"): AccessAction.STATISTICS_READ,
    ("GET", f"{_RELEASE}/attacks"): AccessAction.ATTACKS_READ,
    ("PUT", f"{_SERIES}/background"): AccessAction.BACKGROUND_UPLOAD,
    ("GET", "/v1/jobs/{job_id}"): AccessAction.JOB_READ,
    ("DELETE", "/v1/jobs/{job_id}"): AccessAction.JOB_CANCEL,
    ("POST", "/v1/series"): AccessAction.SERIES_CREATE,
    ("DELETE", _SERIES): AccessAction.SERIES_DELETE,
    ("POST", "/v1/keys"): AccessAction.KEY_CREATE,
    ("GET", "/v1/keys"): AccessAction.KEY_LIST,
    ("DELETE", "/v1/keys/{key_id}"): AccessAction.KEY_REVOKE,
    ("POST", "/v1/keys/{key_id}/rotate"): AccessAction.KEY_ROTATE,
    ("GET", "/v1/access-trail"): AccessAction.TRAIL_READ,
}

_TRUE = {"1", "true", "on", "yes", "t", "y"}


def note(scope: Scope, **details: Any) -> None:
    """Add ``details`` to the event of this request (a key's id, a series a key is scoped
    to: what the path does not say)."""
    scope.setdefault(_DETAILS, {}).update(details)


class AccessTrailMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        at = time.time()
        status = 500

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            principal = scope.get(PRINCIPAL)
            if principal is not None:
                _record(scope, principal, status, at)


def _record(scope: Scope, principal: Principal, status: int, at: float) -> None:
    route = scope.get("route")
    method = scope.get("method", "GET")
    action = ROUTE_ACTIONS.get((method, getattr(route, "path", "")))
    if action is None:
        return
    params: dict[str, Any] = scope.get("path_params") or {}
    details: dict[str, Any] = dict(scope.get(_DETAILS) or {})
    for name in ("key_id", "job_id"):
        if name in params:
            details.setdefault(name.removesuffix("_id"), str(params[name]))
    if action is AccessAction.RELEASE_PUBLISH and _dry_run(scope):
        action = AccessAction.RELEASE_DRY_RUN
    series = details.pop("series", None) or params.get("name")
    event = Event(
        at=at,
        key_id=principal.key_id,
        role=principal.role,
        action=action,
        series=str(series)[:200] if series is not None else None,
        release_no=_release_no(params.get("release_no")),
        status=status,
        details=details or None,
    )
    TRAIL.record(event, urgent=method not in ("GET", "HEAD"))


def _release_no(value: object) -> int | None:
    """The path's release number as the database keeps it (int4), or ``None``."""
    text = str(value) if value is not None else ""
    return int(text) if text.isdigit() and 0 < int(text) < 2**31 else None


def _dry_run(scope: Scope) -> bool:
    query: bytes = scope.get("query_string", b"")
    for part in query.decode("latin-1").split("&"):
        name, _, value = part.partition("=")
        if name == "dry_run":
            return value.lower() in _TRUE
    return False

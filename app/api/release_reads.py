"""The hot read of a release, answered from this process' memory before the router.

``GET`` and ``HEAD /v1/series/{name}/releases/{release_no}`` by a reader this process has
just authenticated, of a release whose rendering it holds, is the service's busiest request.
Through FastAPI it paid the routing (13% of a saturated process) and the solving of its
dependencies (35%) on every request, for an answer that needs neither a query nor an await:
the key, the series' withdrawn releases and the document's bytes are all in memory.

This pure ASGI middleware answers such a request itself, with what the route would answer:
the same checks (the key, its role and series, a withdrawn release), in the same order, and
the same response (:func:`app.api.representation.document_response`). It leaves the route
in the request's scope, so the metrics and the access trail around it record it as the
route's. Whatever it cannot tell from memory without waiting, and every refusal, goes on to
the route, which queries and answers errors as it always did: a key not seen within
``SERIALPUB_READ_AUTH_CACHE_SECONDS``, a series' withdrawn releases not read as long, a
document not held, a refused key, a withdrawn release, an unexpected query string or path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from app.api.access import PRINCIPAL
from app.api.deps import READER_ROLES
from app.api.representation import IMMUTABLE, document_response
from app.services.auth import cached_reader
from app.services.renderings import held_release_document
from app.services.withdrawal import served_from_memory

__all__ = ["HeldReleaseReads"]

#: The route's path, with a release number the route accepts (1 to 2**31 - 1, as written
#: without sign, zeros or spaces; anything else goes to the route, which validates it).
_PATH = re.compile(r"/v1/series/([^/]+)/releases/([1-9][0-9]{0,9})")
_MAX_RELEASE_NO = 2**31 - 1
#: Query strings answered here; others (a misspelt format, further parameters) go on.
_FORMATS = {b"": "json", b"format=json": "json", b"format=ndjson": "ndjson"}


class HeldReleaseReads:
    """Answers a release's GET or HEAD from memory when it can (module docstring);
    ``routes``: the release's route for each method, left in the scope as the router
    would."""

    def __init__(self, app: ASGIApp, routes: Mapping[str, BaseRoute]) -> None:
        self.app = app
        self.routes = routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = self._answer(scope) if scope["type"] == "http" else None
        if response is None:
            await self.app(scope, receive, send)
        else:
            await response(scope, receive, send)

    def _answer(self, scope: Scope) -> Response | None:
        route = self.routes.get(scope["method"])
        if route is None or scope.get("root_path"):
            return None
        matched = _PATH.fullmatch(scope["path"])
        fmt = _FORMATS.get(scope.get("query_string", b""))
        if matched is None or fmt is None:
            return None
        name, number = matched.groups()
        release_no = int(number)
        if release_no > _MAX_RELEASE_NO:
            return None
        runtime = getattr(scope["app"].state, "runtime", None)
        if runtime is None:
            return None
        db = runtime.db
        authorization = None
        for header, value in scope["headers"]:
            if header == b"authorization":
                authorization = value.decode("latin-1")
                break
        reader = cached_reader(db, authorization, name)
        if reader is None:
            return None
        principal, series_id = reader
        # get_readable's checks, answered by the route when they refuse.
        if principal.role != "admin" and principal.role not in READER_ROLES:
            return None
        if not principal.sees_series(name):
            return None
        if not served_from_memory(db, principal, series_id, release_no):
            return None
        document = held_release_document(series_id, release_no, fmt)
        if document is None:
            return None
        # What the router would have left for the middlewares around it.
        scope["route"] = route
        scope["path_params"] = {"name": name, "release_no": number}
        scope[PRINCIPAL] = principal
        return document_response(Request(scope), db, document, IMMUTABLE)

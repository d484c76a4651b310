"""The web view's reads in the access trail (docs/api.md "GET /v1/access-trail").

A page is recorded as the API records the read it stands for, with the same action, so that
a key's reads are one trail whichever way they came: the series page is ``release.list``, a
release's page and its downloads ``release.read``, a job's page and its progress
``job.read`` (:data:`PAGE_ACTIONS`), each with the status the page answered (a refusal too:
an analyst's 410 for a withdrawn release). A page that shows more than its own read notes
the others (:func:`read`): an auditor's series page the series' risk, an auditor's release
page its risk and cover, the counts page every release it reads; they are recorded once the
page is served. ``details.via`` is ``web``. The series list is not recorded, as ``GET
/v1/series`` is not; nor is a request without a session (the API's 401).
"""

from __future__ import annotations

from typing import Any

from fastapi import Request

from app.services.access_trail import TRAIL, AccessAction, Event
from app.services.sessions import WebSession

__all__ = ["PAGE_ACTIONS", "read", "record"]

_SERIES = "/web/series/{name}"
_RELEASE = f"{_SERIES}/releases/{{release_no}}"

#: Route template -> the read the page stands for; a page not listed here is not recorded.
PAGE_ACTIONS: dict[str, AccessAction] = {
    _SERIES: AccessAction.RELEASE_LIST,
    f"{_SERIES}/counts": AccessAction.RELEASE_LIST,
    _RELEASE: AccessAction.RELEASE_READ,
    f"{_RELEASE}/{{file}}": AccessAction.RELEASE_READ,
    "/web/jobs/{job_id}": AccessAction.JOB_READ,
    "/web/jobs/{job_id}/progress": AccessAction.JOB_READ,
}

#: Path parameters recorded in ``details`` (the others are the event's own fields).
_DETAILS = {"job_id": "job", "file": "file"}

_READS = "web_reads"


def read(request: Request, action: AccessAction, release_no: int | None = None) -> None:
    """The page also shows what ``action`` reads (of ``release_no``, when given)."""
    reads: list[tuple[AccessAction, int | None]] = getattr(request.state, _READS, [])
    reads.append((action, release_no))
    setattr(request.state, _READS, reads)


def record(request: Request, status: int, at: float) -> None:
    """Record the page's read and, when it was served, the reads it noted."""
    reader: WebSession | None = getattr(request.state, "web_user", None)
    route = request.scope.get("route")
    action = PAGE_ACTIONS.get(getattr(route, "path", ""))
    if reader is None or action is None:
        return
    params: dict[str, Any] = request.path_params
    details: dict[str, Any] = {"via": "web"}
    for param, field in _DETAILS.items():
        if param in params:
            details[field] = str(params[param])[:200]
    series = str(params["name"])[:200] if "name" in params else None
    reads: list[tuple[AccessAction, int | None]] = [(action, _release_no(params))]
    if status < 400:
        reads += getattr(request.state, _READS, [])
    for done, release_no in reads:
        TRAIL.record(
            Event(
                at=at,
                key_id=reader.principal.key_id,
                role=reader.principal.role,
                action=done,
                series=series,
                release_no=release_no,
                status=status,
                details=details,
            )
        )


def _release_no(params: dict[str, Any]) -> int | None:
    """The path's release number as the database keeps it (int4), or ``None``."""
    text = str(params.get("release_no", ""))
    return int(text) if text.isdigit() and 0 < int(text) < 2**31 else None

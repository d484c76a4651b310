"""The access trail (admin): who read or published what, and when."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Annotated

from fastapi import APIRouter, Query

from app.api.deps import AdminDep, RuntimeDep, SessionDep
from app.core.errors import ErrorCode
from app.errors import Unprocessable
from app.schemas.access_trail import AccessEventOut, AccessTrailPage
from app.schemas.errors import error_responses
from app.services import access_trail
from app.services.access_trail import TRAIL, AccessAction, TrailQuery

router = APIRouter(
    prefix="/v1/access-trail", tags=["keys"], responses=error_responses(401, 403, 422)
)


def _aware(value: dt.datetime | None) -> dt.datetime | None:
    """A time without a zone is UTC."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=dt.UTC)


def _cursor(value: str | None) -> tuple[dt.datetime, int] | None:
    if value is None:
        return None
    at, _, event_id = value.rpartition("/")
    try:
        parsed = _aware(dt.datetime.fromisoformat(at))
        assert parsed is not None
        return parsed, int(event_id)
    except ValueError:
        raise Unprocessable(
            "after: not a cursor this endpoint answered (TIME/ID, the previous page's 'next')",
            {"loc": ["query", "after"]},
            code=ErrorCode.INVALID_REQUEST,
        ) from None


@router.get(
    "",
    response_model=AccessTrailPage,
    summary="Who read or published what, and when: by key, series, action and time",
)
async def read_trail(
    principal: AdminDep,
    session: SessionDep,
    runtime: RuntimeDep,
    key_id: Annotated[uuid.UUID | None, Query(description="The key's id")] = None,
    series: Annotated[str | None, Query(max_length=200)] = None,
    action: Annotated[AccessAction | None, Query()] = None,
    since: Annotated[
        dt.datetime | None, Query(description="From this time on (RFC 3339; no zone: UTC)")
    ] = None,
    until: Annotated[dt.datetime | None, Query(description="Before this time")] = None,
    after: Annotated[
        str | None, Query(max_length=100, description="The previous page's `next`")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 1000,
) -> AccessTrailPage:
    since, until = _aware(since), _aware(until)
    if since is not None and until is not None and until <= since:
        raise Unprocessable(
            "until must be after since",
            {"loc": ["query", "until"]},
            code=ErrorCode.INVALID_REQUEST,
        )
    # What this process still holds is written first, so that the answer includes every
    # request it served until now (other processes' within their flush interval).
    await TRAIL.flush(runtime.db)
    query = TrailQuery(
        key_id=key_id,
        series=series,
        action=action.value if action else None,
        since=since,
        until=until,
        after=_cursor(after),
        limit=limit,
    )
    events = await access_trail.query(session, query)
    out = [AccessEventOut.model_validate(event, from_attributes=True) for event in events]
    last = events[-1] if len(events) == limit else None
    return AccessTrailPage(
        events=out, next=f"{last.at.isoformat()}/{last.id}" if last is not None else None
    )

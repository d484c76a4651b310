"""The semantic audit (design.md §11): the background corpus a series' audit learns from, and the
attack report each publication job kept (auditors, admins)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from app.api.deps import AuditorDep, PublisherDep, ReleaseNo, RuntimeDep, SessionDep
from app.api.openapi import RELEASE_BODY
from app.api.routes.releases import upload_limits
from app.schemas.attacks import AttackReportOut, BackgroundOut
from app.schemas.errors import error_responses
from app.services import semantic_audit
from app.services.ingest import read_corpus
from app.services.series import get_series

router = APIRouter(
    prefix="/v1/series/{name}", tags=["risk"], responses=error_responses(401, 403, 404)
)

_BACKGROUND_BODY: dict[str, Any] = {
    "required": True,
    "description": "The background corpus: one transaction a line, terms separated by white "
    "space (or CSV with a terms column, or the JSON of a release), UTF-8, the "
    "same limits as a release. Never the raw snapshots themselves: it is what "
    "the attacker is assumed to know of the world.",
    "content": {
        **RELEASE_BODY["content"],
        "text/plain": {
            "schema": {"type": "string"},
            "example": "theft arson HIV\nfraud forgery\narson cancer\n",
        },
    },
}


@router.put(
    "/background",
    response_model=BackgroundOut,
    summary="Upload the background corpus of the series' semantic audit (admins, the series' "
    "publishers); replaces the previous one",
    openapi_extra={"requestBody": _BACKGROUND_BODY},
    responses=error_responses(400, 413, 415, 422),
)
async def put_background(
    name: str, request: Request, runtime: RuntimeDep, principal: PublisherDep
) -> BackgroundOut:
    async with runtime.db.session() as session:
        series = await get_series(session, name)
    settings = runtime.settings
    # Parsed with no session held: a large body takes a while to arrive.
    corpus = await read_corpus(
        request.headers.get("content-type"),
        request.stream(),
        limit=settings.max_body_bytes,
        json_limit=settings.max_json_bytes,
        secret=runtime.secret,
        limits=upload_limits(settings),
        content_encoding=request.headers.get("content-encoding"),
        private_match=series.private_match,  # type: ignore[arg-type]
    )
    async with runtime.db.session() as session:
        series = await get_series(session, name)
        return await semantic_audit.upload_background(session, series, corpus)


@router.get(
    "/releases/{release_no}/attacks",
    response_model=AttackReportOut,
    summary="The semantic-attack report the publication job kept (auditors, admins); 404 "
    "when the series had no semantic_audit then",
)
async def read_attacks(
    name: str, release_no: ReleaseNo, principal: AuditorDep, session: SessionDep
) -> AttackReportOut:
    series = await get_series(session, name)
    return await semantic_audit.attack_report(session, series, release_no)

"""API keys (admin)."""

from __future__ import annotations

import uuid

from fastapi import APIRouter, Request, Response

from app.api.body import json_body, request_body
from app.api.deps import AdminDep, SessionDep
from app.schemas.errors import error_responses
from app.schemas.keys import KeyCreate, KeyInfo, KeyOut
from app.services import auth

router = APIRouter(prefix="/v1/keys", tags=["keys"], responses=error_responses(401, 403))


@router.post(
    "",
    status_code=201,
    response_model=KeyOut,
    summary="Create a key (shown this once)",
    openapi_extra=request_body(KeyCreate),
    responses=error_responses(400, 404, 413, 415, 422),
)
async def create_key(request: Request, principal: AdminDep, session: SessionDep) -> KeyOut:
    body = await json_body(request, KeyCreate)
    key, plain = await auth.create_key(session, body.role, body.series)
    return KeyOut(id=key.id, key=plain, role=body.role, series=key.series_name)


@router.get("", response_model=list[KeyInfo], summary="Every key that is not revoked")
async def list_keys(principal: AdminDep, session: SessionDep) -> list[KeyInfo]:
    return [
        KeyInfo(id=k.id, role=k.role, series=k.series_name, created_at=k.created_at)
        for k in await auth.list_keys(session)
    ]


@router.delete("/{key_id}", status_code=204, summary="Revoke a key", responses=error_responses(404))
async def revoke_key(key_id: uuid.UUID, principal: AdminDep, session: SessionDep) -> Response:
    await auth.revoke_key(session, key_id)
    return Response(status_code=204)

"""API keys (admin)."""

from __future__ import annotations

import datetime as dt
import uuid

from fastapi import APIRouter, Request, Response

from app.api.access import note
from app.api.body import json_body, request_body
from app.api.deps import AdminDep, SessionDep
from app.db.models import ApiKey
from app.schemas.errors import error_responses
from app.schemas.keys import KeyCreate, KeyInfo, KeyOut, KeyRotate, KeyRotated
from app.services import auth

router = APIRouter(prefix="/v1/keys", tags=["keys"], responses=error_responses(401, 403))


def _out(key: ApiKey, plain: str) -> KeyOut:
    return KeyOut(
        id=key.id, key=plain, role=key.role, series=key.series_name, expires_at=key.expires_at
    )


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
    key, plain = await auth.create_key(session, body.role, body.series, expires_at=body.expires_at)
    note(request.scope, key=str(key.id), series=key.series_name)
    return _out(key, plain)


@router.get(
    "",
    response_model=list[KeyInfo],
    summary="Every key that is not revoked, with its expiry and last use",
)
async def list_keys(principal: AdminDep, session: SessionDep) -> list[KeyInfo]:
    return [
        KeyInfo(
            id=k.id,
            role=k.role,
            series=k.series_name,
            created_at=k.created_at,
            expires_at=k.expires_at,
            last_used_at=k.last_used_at,
            replaced_by=k.replaced_by,
        )
        for k in await auth.list_keys(session)
    ]


@router.delete("/{key_id}", status_code=204, summary="Revoke a key", responses=error_responses(404))
async def revoke_key(key_id: uuid.UUID, principal: AdminDep, session: SessionDep) -> Response:
    await auth.revoke_key(session, key_id)
    return Response(status_code=204)


@router.post(
    "/{key_id}/rotate",
    status_code=201,
    response_model=KeyRotated,
    summary="Replace a key by a new one; the old one works for a grace period",
    openapi_extra=request_body(KeyRotate, required=False),
    responses=error_responses(400, 404, 409, 413, 415, 422),
)
async def rotate_key(
    key_id: uuid.UUID, request: Request, principal: AdminDep, session: SessionDep
) -> KeyRotated:
    body = await json_body(request, KeyRotate, empty=KeyRotate())
    old, new, plain = await auth.rotate_key(
        session, key_id, dt.timedelta(seconds=body.grace_seconds), body.expires_at
    )
    note(request.scope, new_key=str(new.id), series=new.series_name)
    assert old.expires_at is not None
    return KeyRotated(
        **_out(new, plain).model_dump(), replaces=old.id, replaced_key_expires_at=old.expires_at
    )

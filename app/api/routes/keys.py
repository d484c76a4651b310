"""API keys (admin)."""

from __future__ import annotations

import uuid

from fastapi import APIRouter, Response

from app.api.deps import PrincipalDep, SessionDep
from app.schemas.errors import error_responses
from app.schemas.keys import KeyCreate, KeyOut
from app.services import auth

router = APIRouter(prefix="/v1/keys", tags=["keys"], responses=error_responses(401, 403))


@router.post("", status_code=201, response_model=KeyOut,
             summary="Create a key (shown this once)", responses=error_responses(422))
async def create_key(body: KeyCreate, principal: PrincipalDep, session: SessionDep) -> KeyOut:
    principal.require("admin")
    key, plain = await auth.create_key(session, body.role, body.series)
    return KeyOut(id=key.id, key=plain, role=body.role, series=key.series_name)


@router.delete("/{key_id}", status_code=204, summary="Revoke a key",
               responses=error_responses(404))
async def revoke_key(key_id: uuid.UUID, principal: PrincipalDep, session: SessionDep) -> Response:
    principal.require("admin")
    await auth.revoke_key(session, key_id)
    return Response(status_code=204)

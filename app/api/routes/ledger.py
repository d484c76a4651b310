"""The private side of a release, for auditors and admins (docs/api.md, design.md §3 and §11)."""

from __future__ import annotations

from fastapi import APIRouter

from app.api.deps import AuditorDep, ReleaseNo, SessionDep
from app.schemas.errors import error_responses
from app.schemas.ledger import LedgerOut
from app.services.ledger import release_ledger
from app.services.series import get_series

router = APIRouter(
    prefix="/v1/series/{name}", tags=["risk"], responses=error_responses(401, 403, 404)
)


@router.get(
    "/releases/{release_no}/ledger",
    response_model=LedgerOut,
    summary="Which rows of a release are counterfeits (auditors, admins; never "
    "analysts or publishers)",
)
async def read_ledger(
    name: str, release_no: ReleaseNo, principal: AuditorDep, session: SessionDep
) -> LedgerOut:
    series = await get_series(session, name)
    return await release_ledger(session, series, release_no)

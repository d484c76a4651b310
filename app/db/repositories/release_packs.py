"""Release packs (:class:`~app.db.models.ReleasePack`): a release and its ledger as the compute
child packed them, stored in chunks and read back whole for the series' next job."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import ReleasePack

__all__ = ["PACK_CHUNK", "store_pack", "load_packs"]

#: Bytes per chunk: a 10,000,000-line release packs to a few hundred megabytes, and one value
#: of that size would be one allocation of it in the server and in the driver at once.
PACK_CHUNK = 32 * 1024 * 1024


async def store_pack(session: AsyncSession, release_id: int, packed: bytes) -> None:
    """Keep ``packed`` (:func:`app.jobs.handoff.pack_release`) for release ``release_id``."""
    view = memoryview(packed)
    rows = [
        {"release_id": release_id, "seq": seq, "data": view[start : start + PACK_CHUNK]}
        for seq, start in enumerate(range(0, max(len(packed), 1), PACK_CHUNK))
    ]
    await session.execute(insert(ReleasePack), rows)


async def load_packs(session: AsyncSession, release_ids: Sequence[int]) -> dict[int, bytes]:
    """The packs of those of ``release_ids`` that have one (releases stored before packs were
    kept have none)."""
    if not release_ids:
        return {}
    statement = (
        select(ReleasePack.release_id, ReleasePack.data)
        .where(ReleasePack.release_id.in_(release_ids))
        .order_by(ReleasePack.release_id, ReleasePack.seq)
    )
    found: dict[int, bytes] = {}
    current: int | None = None
    chunks: list[bytes] = []
    # Streamed, and each release joined as soon as its last chunk is read: a history of four
    # 10M-line releases is then held about once, not as chunks and joined copies together.
    result = await session.stream(statement)
    async for release_id, data in result:
        if release_id != current and current is not None:
            found[current] = b"".join(chunks)
            chunks = []
        current = release_id
        chunks.append(data)
    if current is not None:
        found[current] = b"".join(chunks)
    return found

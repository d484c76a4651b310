"""The term dictionary: term <-> integer id, shared by every series."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.raw import driver_connection

__all__ = ["ensure_terms", "terms_by_id", "row_hash"]


def row_hash(terms: Sequence[str]) -> int:
    """A signed 64-bit hash of a row's terms (indexed; equal non-private sets, equal hash)."""
    digest = hashlib.blake2b("\x1f".join(terms).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


async def ensure_terms(session: AsyncSession, terms: Iterable[str]) -> dict[str, int]:
    """Ids of ``terms``, inserting the new ones.

    Terms are inserted in sorted order so that two transactions adding overlapping sets take
    the unique index' row locks in the same order (no deadlock).
    """
    wanted = sorted(set(terms))
    if not wanted:
        return {}
    conn = await driver_connection(session)
    async with conn.cursor() as cur:
        await cur.execute(
            "INSERT INTO terms (term) SELECT t FROM unnest(%s::text[]) AS t "
            "ON CONFLICT (term) DO NOTHING",
            (wanted,),
        )
        await cur.execute("SELECT term, id FROM terms WHERE term = ANY(%s::text[])", (wanted,))
        rows = await cur.fetchall()
    return {str(term): int(term_id) for term, term_id in rows}


async def terms_by_id(session: AsyncSession, ids: Iterable[int]) -> dict[int, str]:
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    conn = await driver_connection(session)
    async with conn.cursor() as cur:
        await cur.execute("SELECT id, term FROM terms WHERE id = ANY(%s::int4[])", (wanted,))
        rows = await cur.fetchall()
    return {int(term_id): str(term) for term_id, term in rows}

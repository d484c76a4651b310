"""Inv's signatures (design.md §9): individual key -> sensitive values, per series."""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy.ext.asyncio import AsyncSession

from app.db import copytext as ct
from app.db.copytext import copy_rows
from app.db.raw import driver_connection

__all__ = ["load_signatures", "store_signatures"]

Signatures = dict[str, frozenset[str]]


async def load_signatures(session: AsyncSession, series_id: int) -> Signatures:
    """Every signature of a series: individual key -> frozen set of values."""
    conn = await driver_connection(session)
    result: Signatures = {}
    statement = (
        "COPY (SELECT individual_key, signature FROM inv_signatures "
        f"WHERE series_id = {int(series_id)}) TO STDOUT (FORMAT BINARY)"
    )
    async with conn.cursor() as cur, cur.copy(statement) as copy:
        copy.set_types(["text", "text[]"])
        async for key, signature in copy.rows():
            result[key] = frozenset(signature)
    return result


async def store_signatures(
    session: AsyncSession, series_id: int, update: Mapping[str, frozenset[str]]
) -> int:
    """Insert new signatures and replace changed ones; returns the rows written.

    The release's individuals are streamed into a temporary table (dropped at commit or
    rollback) and merged in one statement; a persisting individual's unchanged signature is
    not rewritten.
    """
    if not update:
        return 0
    conn = await driver_connection(session)
    async with conn.cursor() as cur:
        await cur.execute(
            "CREATE TEMP TABLE inv_signatures_in (individual_key text, signature text[]) "
            "ON COMMIT DROP"
        )
    lines = (
        f"{ct.text(key)}\t{ct.text_array(sorted(signature))}" for key, signature in update.items()
    )
    await copy_rows(conn, "COPY inv_signatures_in (individual_key, signature) FROM STDIN", lines)
    async with conn.cursor() as cur:
        await cur.execute(
            "INSERT INTO inv_signatures (series_id, individual_key, signature) "
            "SELECT %s, individual_key, signature FROM inv_signatures_in "
            "ON CONFLICT (series_id, individual_key) DO UPDATE SET signature = EXCLUDED.signature "
            "WHERE inv_signatures.signature IS DISTINCT FROM EXCLUDED.signature",
            (series_id,),
        )
        written = cur.rowcount
        await cur.execute("DROP TABLE inv_signatures_in")
    return written

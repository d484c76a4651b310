"""Wong's statistics file m(o, s) (design.md §6), keyed by an HMAC of the pseudonym."""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.raw import driver_connection

__all__ = ["load_statistics", "append_statistics", "statistics_of"]

Statistics = dict[str, dict[str, list[tuple[int, int]]]]


async def load_statistics(session: AsyncSession, series_id: int) -> Statistics:
    """The whole file of a series: individual key -> term -> [(n_j, n_js), ...] by release."""
    conn = await driver_connection(session)
    result: Statistics = {}
    statement = (
        "COPY (SELECT individual_key, term, n_j, n_js FROM wong_statistics "
        f"WHERE series_id = {int(series_id)} ORDER BY individual_key, term, release_no) "
        "TO STDOUT (FORMAT BINARY)"
    )
    async with conn.cursor() as cur, cur.copy(statement) as copy:
        copy.set_types(["text", "text", "int4", "int4"])
        async for key, term, n_j, n_js in copy.rows():
            result.setdefault(key, {}).setdefault(term, []).append((n_j, n_js))
    return result


async def statistics_of(
    session: AsyncSession, series_id: int, individual_key: str
) -> dict[str, list[tuple[int, int, int]]]:
    """One individual's entries: term -> [(release_no, n_j, n_js), ...]."""
    conn = await driver_connection(session)
    result: dict[str, list[tuple[int, int, int]]] = {}
    async with conn.cursor() as cur:
        await cur.execute(
            "SELECT term, release_no, n_j, n_js FROM wong_statistics "
            "WHERE series_id = %s AND individual_key = %s ORDER BY term, release_no",
            (series_id, individual_key),
        )
        for term, release_no, n_j, n_js in await cur.fetchall():
            result.setdefault(term, []).append((release_no, n_j, n_js))
    return result


async def append_statistics(
    session: AsyncSession,
    series_id: int,
    release_no: int,
    update: Mapping[str, Mapping[str, tuple[int, int]]],
) -> int:
    """Append this release's ``(n_k, n_ks)`` per (individual, term); returns entries written."""
    conn = await driver_connection(session)
    written = 0
    async with (
        conn.cursor() as cur,
        cur.copy(
            "COPY wong_statistics (series_id, individual_key, term, release_no, n_j, n_js) "
            "FROM STDIN (FORMAT BINARY)"
        ) as copy,
    ):
        copy.set_types(["int4", "text", "text", "int4", "int4", "int4"])
        for key, terms in update.items():
            for term, (n_k, n_ks) in terms.items():
                await copy.write_row((series_id, key, term, release_no, n_k, n_ks))
                written += 1
    return written

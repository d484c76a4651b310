"""Writing one publication: the release, its clusters, rows and ledgers, in bulk.

Everything goes into the caller's transaction; clusters, rows, cluster ledgers and Wong's
statistics are streamed with ``COPY ... FROM STDIN (FORMAT BINARY)``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping

from psycopg.types.json import Jsonb
from sqlalchemy.ext.asyncio import AsyncSession

from app.core.model import Publication, PublishedRelease
from app.db.models import Release, ReleaseLedger
from app.db.raw import driver_connection
from app.db.repositories.terms import ensure_terms, row_hash

__all__ = ["store_publication"]


async def store_publication(
    session: AsyncSession,
    *,
    series_id: int,
    method: str,
    params: Mapping[str, object],
    publication: Publication,
    job_id: uuid.UUID | None,
) -> Release:
    """Store ``publication`` as release ``publication.release.release_no`` of the series."""
    release = publication.release
    term_ids = await ensure_terms(
        session, (t for c in release.clusters for row in c.rows for t in row)
    )
    model = Release(
        series_id=series_id,
        release_no=release.release_no,
        label=release.label,
        method=method,
        params=dict(params),
        private_terms=sorted(release.private_terms),
        n_rows=release.n_rows,
        n_clusters=len(release.clusters),
        population_rates=dict(release.population_rates),
        global_bag=dict(release.global_bag),
        global_counterfeits=release.global_counterfeits,
        job_id=job_id,
    )
    session.add(model)
    await session.flush()
    session.add(
        ReleaseLedger(
            release_id=model.id,
            global_bag_counterfeits=dict(publication.ledger.global_bag_counterfeits),
            suppressed=dict(publication.ledger.suppressed),
        )
    )
    cluster_pks = await _allocate_cluster_ids(session, len(release.clusters))
    await _copy_clusters(session, model.id, release, cluster_pks)
    await _copy_rows(session, model.id, release, cluster_pks, term_ids)
    await _copy_ledgers(session, model.id, publication, cluster_pks)
    await session.flush()
    return model


async def _allocate_cluster_ids(session: AsyncSession, n: int) -> list[int]:
    conn = await driver_connection(session)
    async with conn.cursor() as cur:
        await cur.execute(
            "SELECT nextval(pg_get_serial_sequence('clusters', 'id')) "
            "FROM generate_series(1, %s)",
            (n,),
        )
        return [int(r[0]) for r in await cur.fetchall()]


async def _copy(
    session: AsyncSession, statement: str, types: list[str], rows: Iterator[tuple[object, ...]]
) -> None:
    conn = await driver_connection(session)
    async with conn.cursor() as cur, cur.copy(statement) as copy:  # type: ignore[arg-type]
        copy.set_types(types)
        for row in rows:
            await copy.write_row(row)


async def _copy_clusters(
    session: AsyncSession, release_id: int, release: PublishedRelease, pks: list[int]
) -> None:
    rows = (
        (pk, release_id, position, c.cluster_id, c.size, Jsonb(c.private_counts),
         Jsonb(c.global_share), c.counterfeits)
        for position, (pk, c) in enumerate(zip(pks, release.clusters, strict=True))
    )
    await _copy(
        session,
        "COPY clusters (id, release_id, position, cluster_id, n_rows, private_counts, "
        "global_share, counterfeits) FROM STDIN (FORMAT BINARY)",
        ["int8", "int8", "int4", "text", "int4", "jsonb", "jsonb", "int4"],
        rows,
    )


async def _copy_rows(
    session: AsyncSession,
    release_id: int,
    release: PublishedRelease,
    pks: list[int],
    term_ids: Mapping[str, int],
) -> None:
    hashes: dict[tuple[str, ...], int] = {}

    def rows() -> Iterator[tuple[object, ...]]:
        for pk, cluster in zip(pks, release.clusters, strict=True):
            for position, row in enumerate(cluster.rows):
                digest = hashes.get(row)
                if digest is None:
                    digest = hashes[row] = row_hash(row)
                yield pk, position, release_id, [term_ids[t] for t in row], digest

    await _copy(
        session,
        "COPY published_rows (cluster_pk, position, release_id, term_ids, terms_hash) "
        "FROM STDIN (FORMAT BINARY)",
        ["int8", "int4", "int8", "int4[]", "int8"],
        rows(),
    )


async def _copy_ledgers(
    session: AsyncSession, release_id: int, publication: Publication, pks: list[int]
) -> None:
    ledgers = publication.ledger.clusters
    if len(ledgers) != len(pks):
        raise ValueError(
            f"ledger has {len(ledgers)} clusters, release has {len(pks)}: core contract broken"
        )
    rows = (
        (pk, release_id, list(led.counterfeit_rows), led.bp, led.fp1, led.fp2,
         list(led.individuals))
        for pk, led in zip(pks, ledgers, strict=True)
    )
    await _copy(
        session,
        "COPY cluster_ledgers (cluster_pk, release_id, counterfeit_rows, bp, fp1, fp2, "
        "individuals) FROM STDIN (FORMAT BINARY)",
        ["int8", "int8", "int4[]", "int4", "int4", "int4", "text[]"],
        rows,
    )

"""Writing one publication: the release, its clusters, rows and ledgers, in bulk.

Everything goes into the caller's transaction; clusters, rows, cluster ledgers and Wong's
statistics are streamed with ``COPY ... FROM STDIN`` in preformatted blocks, the rows (the
bulk: one per published transaction) in the binary format with integer term ids.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping

from sqlalchemy.ext.asyncio import AsyncSession

from app.core.model import Publication, PublishedRelease
from app.db import copytext as ct
from app.db.copybinary import copy_binary, row_fields, rows_blocks
from app.db.copytext import copy_rows
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
    distinct = {row for c in release.clusters for row in c.rows}
    term_ids = await ensure_terms(session, (t for row in distinct for t in row))
    del distinct
    model = Release(
        series_id=series_id,
        release_no=release.release_no,
        label=release.label,
        method=method,
        params=dict(params),
        private_terms=sorted(release.private_terms),
        n_rows=release.n_rows,
        n_clusters=release.n_clusters,
        population_rates=dict(release.population_rates),
        global_bag=dict(release.global_bag),
        global_counterfeits=release.global_counterfeits,
        counterfeit_rows=release.counterfeit_rows,
        suppression_beyond_budget=release.suppression_beyond_budget,
        job_id=job_id,
    )
    session.add(model)
    await session.flush()
    session.add(
        ReleaseLedger(
            release_id=model.id,
            global_bag_counterfeits=dict(publication.ledger.global_bag_counterfeits),
            suppressed=dict(publication.ledger.suppressed),
            randomness=dict(publication.ledger.randomness),
        )
    )
    cluster_pks = await _allocate_cluster_ids(session, len(release.clusters))
    await _copy_clusters(session, model.id, release, cluster_pks)
    await _copy_rows(session, release, cluster_pks, term_ids)
    await _copy_ledgers(session, model.id, publication, cluster_pks)
    await session.flush()
    return model


async def _allocate_cluster_ids(session: AsyncSession, n: int) -> list[int]:
    conn = await driver_connection(session)
    async with conn.cursor() as cur:
        await cur.execute(
            "SELECT nextval(pg_get_serial_sequence('clusters', 'id')) FROM generate_series(1, %s)",
            (n,),
        )
        return [int(r[0]) for r in await cur.fetchall()]


def _line(*cells: str | int) -> str:
    return "\t".join(map(str, cells))


async def _copy(session: AsyncSession, statement: str, lines: Iterator[str]) -> None:
    await copy_rows(await driver_connection(session), statement, lines)


async def _copy_clusters(
    session: AsyncSession, release_id: int, release: PublishedRelease, pks: list[int]
) -> None:
    lines = (
        _line(
            pk,
            release_id,
            position,
            ct.text(c.cluster_id),
            c.size,
            ct.counts_jsonb(c.private_counts),
            ct.counts_jsonb(c.global_share),
            c.counterfeits,
        )
        for position, (pk, c) in enumerate(zip(pks, release.clusters, strict=True))
    )
    await _copy(
        session,
        "COPY clusters (id, release_id, position, cluster_id, n_rows, private_counts, "
        "global_share, counterfeits) FROM STDIN",
        lines,
    )


async def _copy_rows(
    session: AsyncSession,
    release: PublishedRelease,
    pks: list[int],
    term_ids: Mapping[str, int],
) -> None:
    """The rows in PostgreSQL's binary COPY format: each distinct row's ``int4[]`` of term
    ids and its hash are built once; a row is then its key and those bytes."""
    formatted: dict[tuple[str, ...], bytes] = {}

    def keyed() -> Iterator[tuple[int, int, bytes]]:
        for pk, cluster in zip(pks, release.clusters, strict=True):
            for position, row in enumerate(cluster.rows):
                fields = formatted.get(row)
                if fields is None:
                    fields = formatted[row] = row_fields([term_ids[t] for t in row], row_hash(row))
                yield pk, position, fields

    await copy_binary(
        await driver_connection(session),
        "COPY published_rows (cluster_pk, position, term_ids, terms_hash) FROM STDIN "
        "(FORMAT BINARY)",
        rows_blocks(keyed()),
    )


async def _copy_ledgers(
    session: AsyncSession, release_id: int, publication: Publication, pks: list[int]
) -> None:
    ledgers = publication.ledger.clusters
    if len(ledgers) != len(pks):
        raise ValueError(
            f"ledger has {len(ledgers)} clusters, release has {len(pks)}: core contract broken"
        )
    lines = (
        _line(
            pk,
            release_id,
            ct.int_array(led.counterfeit_rows),
            led.bp,
            led.fp1,
            led.fp2,
            ct.text_array(led.individuals),
            ct.counts_jsonb(led.suppressed),
        )
        for pk, led in zip(pks, ledgers, strict=True)
    )
    await _copy(
        session,
        "COPY cluster_ledgers (cluster_pk, release_id, counterfeit_rows, bp, fp1, fp2, "
        "individuals, suppressed) FROM STDIN",
        lines,
    )

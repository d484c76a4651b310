"""What the web view reads of a series beyond its releases' rows: the private copies each
release publishes per term, and the series' jobs."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import Integer, cast, func, select, true
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Cluster, Job

__all__ = ["segment_copies", "series_jobs"]


async def segment_copies(
    session: AsyncSession, release_ids: Sequence[int]
) -> dict[int, dict[str, int]]:
    """Per release id, the copies of each private term its clusters' segments publish
    (``private_terms`` of the public clusters, summed; the global bag is the release's)."""
    if not release_ids:
        return {}
    pairs = func.jsonb_each_text(Cluster.private_counts).table_valued("key", "value").lateral()
    statement = (
        select(Cluster.release_id, pairs.c.key, func.sum(cast(pairs.c.value, Integer)))
        .select_from(Cluster)
        .join(pairs, true())
        .where(Cluster.release_id.in_(release_ids))
        .group_by(Cluster.release_id, pairs.c.key)
    )
    found: dict[int, dict[str, int]] = {i: {} for i in release_ids}
    for release_id, term, copies in (await session.execute(statement)).all():
        found[release_id][term] = int(copies)
    return found


async def series_jobs(
    session: AsyncSession, series_id: int, posted_by: uuid.UUID | None, limit: int
) -> list[Job]:
    """The series' most recent jobs, newest first; ``posted_by``: only that key's."""
    statement = select(Job).where(Job.series_id == series_id)
    if posted_by is not None:
        statement = statement.where(Job.api_key_id == posted_by)
    statement = statement.order_by(Job.created_at.desc()).limit(limit)
    return list((await session.scalars(statement)).all())

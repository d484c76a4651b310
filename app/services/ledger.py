"""The ledger of a release: its private side aligned with the public rows (auditors, admins).

An auditor checks counterfeit rates and the semantic attack (design.md §11) against it without
trusting the publisher's summaries: the flags follow the row order of the public release.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Series
from app.db.repositories.release_load import load_ledgers, load_releases
from app.db.repositories.releases import ReleaseRepository
from app.errors import NotFound
from app.schemas.ledger import ClusterLedgerOut, LedgerOut

__all__ = ["release_ledger"]


async def release_ledger(session: AsyncSession, series: Series, release_no: int) -> LedgerOut:
    model = await ReleaseRepository(session).get(series.id, release_no)
    if model is None:
        raise NotFound(
            f"series {series.name!r} has no release {release_no}",
            {"series": series.name, "release_no": release_no},
        )
    (release,) = await load_releases(session, [model])
    (ledger,) = await load_ledgers(session, [model])
    clusters = []
    for cluster, book in zip(release.clusters, ledger.clusters, strict=True):
        flags = [False] * cluster.size
        for index in book.counterfeit_rows:
            flags[index] = True
        clusters.append(
            ClusterLedgerOut(
                cluster_id=cluster.cluster_id,
                counterfeit=flags,
                bp=book.bp,
                fp1=book.fp1,
                fp2=book.fp2,
                suppressed=dict(book.suppressed),
            )
        )
    return LedgerOut(
        release_no=release_no,
        clusters=clusters,
        global_counterfeits=release.global_counterfeits,
        global_bag_counterfeits=dict(ledger.global_bag_counterfeits),
        suppressed=dict(ledger.suppressed),
        randomness=dict(ledger.randomness),
    )

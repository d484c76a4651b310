"""The ledger of a release: its private side aligned with the public rows (auditors, admins).

An auditor checks counterfeit rates and the semantic attack (design.md §11) against it without
trusting the publisher's summaries: the flags follow the row order of the public release.

Its objects are written with their keys sorted: the process that published the release holds
the compute child's ledger, whose objects keep the order the core built them in, and any
later read PostgreSQL's, whose JSONB has an order of its own; an auditor who keeps a digest
of the ledger must read the same bytes from either.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Series
from app.db.repositories.release_load import load_ledgers, load_releases
from app.db.repositories.releases import ReleaseRepository
from app.errors import NotFound
from app.schemas.ledger import ClusterLedgerOut, LedgerOut

__all__ = ["release_ledger"]

_V = TypeVar("_V")


def _sorted(mapping: Mapping[str, _V]) -> dict[str, _V]:
    """``mapping`` with its keys in sorted order (the ledger's one serialisation).

    >>> _sorted({"source": "secret", "secret": "9f"})
    {'secret': '9f', 'source': 'secret'}
    """
    return dict(sorted(mapping.items()))


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
                suppressed=_sorted(book.suppressed),
            )
        )
    return LedgerOut(
        release_no=release_no,
        clusters=clusters,
        global_counterfeits=release.global_counterfeits,
        global_bag_counterfeits=_sorted(ledger.global_bag_counterfeits),
        suppressed=_sorted(ledger.suppressed),
        randomness=_sorted(ledger.randomness),
    )

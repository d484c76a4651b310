"""Typed factories for repository tests."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from app.core.model import ClusterLedger, Publication, ReleaseLedger, release_from_counts
from app.db.models import Series


async def series(session: AsyncSession, name: str = "s", method: str = "sanony") -> Series:
    model = Series(name=name, method=method, private_terms=["HIV", "cancer"], params={"r_th": 2})
    session.add(model)
    await session.flush()
    return model


def publication(release_no: int = 1) -> Publication:
    release = release_from_counts(
        release_no,
        [
            ([("arson", "fraud", "theft"), ("arson", "theft")], {"HIV": 1, "cancer": 1}, {}, 1),
            (
                [("abuse", "arson"), ("arson", "vandal"), ("abuse", "arson")],
                {"cancer": 1},
                {"HIV": 0},
                0,
            ),
        ],
        {"herpes": 1},
        {"HIV": 0.2, "cancer": 0.4, "herpes": 0.2},
    )
    release.private_terms = frozenset({"HIV", "cancer", "herpes"})
    release.label = "2024"
    ledger = ReleaseLedger(
        clusters=[
            ClusterLedger([1], 1, 0, 0, ["k1", None]),
            ClusterLedger([], 0, 0, 2, ["k2", "k3", None]),
        ],
        global_bag_counterfeits={"herpes": 0},
        suppressed={},
    )
    return Publication(release=release, ledger=ledger, report={})

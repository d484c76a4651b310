"""Release packs: each release kept as its job's compute child packed it, and
handed to the series' next job as it is, instead of its rows read back into objects.

The claim that makes this sound: the pack unpacks to exactly the release and ledger that the
database's rows give back, so a job's child sees the same history either way.
"""

from __future__ import annotations

import random
from typing import Any

import httpx
import pytest
from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.core.history import SeriesHistory
from app.db.models import ReleasePack, Series
from app.db.repositories import release_packs
from app.db.repositories.release_load import RELEASE_CACHE
from app.jobs.handoff import unpack_history
from app.methods.registry import get_method
from app.services.history import load_keyed_history, load_packed_history
from tests.api.conftest import create_key, create_series

pytestmark = [pytest.mark.anyio, pytest.mark.db]

SERIES = "packs"


def _body(release: int) -> dict[str, Any]:
    """A release of 60 transactions with individuals (half of them carried over), seeded."""
    rng = random.Random(release)
    public = [f"t{i}" for i in range(12)]
    rows = []
    for i in range(60):
        person = i + 30 * (release - 1)
        terms = rng.sample(public, rng.randint(1, 3))
        if rng.random() < 0.4:
            terms.append(rng.choice(["HIV", "cancer"]))
        rows.append({"terms": terms, "individual": f"p{person}"})
    return {"label": str(2020 + release), "transactions": rows}


async def _publish(client: httpx.AsyncClient, releases: range) -> list[dict[str, Any]]:
    publisher = await create_key(client, "publisher", SERIES)
    answers = []
    for release in releases:
        posted = await client.post(
            f"/v1/series/{SERIES}/releases?wait=true", json=_body(release), headers=publisher
        )
        assert posted.status_code == 201, posted.text
        answers.append(posted.json())
    return answers


async def _packs_match_rows(session: AsyncSession, series: Series, releases: int) -> SeriesHistory:
    """Assert that the series' ``releases`` packs unpack to exactly the releases and ledgers
    its rows give back (read with the worker's cache emptied); returns the latter."""
    method = get_method(series.method)
    packed = await load_packed_history(session, series, method)
    assert packed is not None and len(packed.release_ids) == releases
    RELEASE_CACHE.clear()
    history, ids = await load_keyed_history(session, series, method)
    assert packed.release_ids == ids
    unpacked = unpack_history(packed.releases, b"")
    assert unpacked.releases == history.releases
    assert unpacked.ledgers == history.ledgers
    return history


async def test_a_pack_unpacks_to_what_the_rows_give_back(
    client: httpx.AsyncClient, session: AsyncSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Small chunks: a pack of a few kilobytes spans many, read back in order.
    monkeypatch.setattr(release_packs, "PACK_CHUNK", 512)
    # The paper's guarantee: its ledger holds counterfeit rows for the pack to carry.
    await create_series(
        client,
        SERIES,
        private_terms=["HIV", "cancer"],
        params={"r_th": 2, "cluster_size": 4, "guarantee": "paper"},
    )
    await _publish(client, range(1, 4))
    series = await session.scalar(select(Series).where(Series.name == SERIES))
    assert series is not None
    chunks = await session.scalar(select(func.count()).select_from(ReleasePack))
    assert chunks is not None and chunks > 3
    history = await _packs_match_rows(session, series, releases=3)
    assert sum(r.counterfeit_rows or 0 for r in history.releases) > 0  # a ledger with some


async def test_a_release_without_a_pack_is_read_from_its_rows(
    client: httpx.AsyncClient, session: AsyncSession
) -> None:
    await create_series(
        client, SERIES, private_terms=["HIV", "cancer"], params={"r_th": 2, "cluster_size": 4}
    )
    await _publish(client, range(1, 3))
    series = await session.scalar(select(Series).where(Series.name == SERIES))
    assert series is not None
    # As a release stored before packs were kept: the next job reads every release's rows.
    method = get_method(series.method)
    packed = await load_packed_history(session, series, method)
    assert packed is not None
    await session.execute(
        delete(ReleasePack).where(ReleasePack.release_id == packed.release_ids[0])
    )
    await session.commit()
    RELEASE_CACHE.clear()
    series = await session.scalar(select(Series).where(Series.name == SERIES))
    assert series is not None
    assert await load_packed_history(session, series, method) is None
    (third,) = await _publish(client, range(3, 4))
    assert third["release"]["release_no"] == 3
    # Its own pack is kept: the job after it reads packs again.
    assert await load_packed_history(session, series, method) is None  # release 1 still has none
    count = select(func.count()).select_from(ReleasePack)
    assert (await session.scalar(count.where(ReleasePack.release_id > packed.release_ids[1]))) == 1


@pytest.mark.parametrize("method", ["anony", "wong", "kanony", "scomp", "inv", "disassociation"])
async def test_every_method_packs_what_its_rows_give_back(
    client: httpx.AsyncClient, session: AsyncSession, method: str
) -> None:
    # The series' next job reads the packs of every method; the worker's cache relied on
    # the same equality before, within one worker's life.
    await create_series(client, SERIES, method=method, private_terms=["HIV", "cancer"], params={})
    publisher = await create_key(client, "publisher", SERIES)
    for release in range(1, 4):
        await client.post(
            f"/v1/series/{SERIES}/releases?wait=true", json=_body(release), headers=publisher
        )
    series = await session.scalar(select(Series).where(Series.name == SERIES))
    assert series is not None
    await _packs_match_rows(session, series, releases=3)

"""Storing and loading releases through COPY, the term dictionary and the statistics file."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import PublishedRow, Term
from app.db.repositories.release_load import ReleaseCache, load_ledgers, load_releases
from app.db.repositories.release_store import store_publication
from app.db.repositories.releases import ReleaseRepository
from app.db.repositories.statistics import append_statistics, load_statistics, statistics_of
from app.db.repositories.terms import ensure_terms, row_hash
from tests.db import factories

pytestmark = [pytest.mark.anyio, pytest.mark.db]


async def test_store_then_load_round_trip(session: AsyncSession) -> None:
    series = await factories.series(session)
    publication = factories.publication()
    model = await store_publication(
        session,
        series_id=series.id,
        method="sanony",
        params={"r_th": 2.0},
        publication=publication,
        job_id=None,
    )
    assert (model.release_no, model.n_rows, model.n_clusters) == (1, 5, 2)
    (loaded,) = await load_releases(session, [model], cache=None)
    original = publication.release
    assert [c.rows for c in loaded.clusters] == [c.rows for c in original.clusters]
    assert [c.private_counts for c in loaded.clusters] == [
        c.private_counts for c in original.clusters
    ]
    assert [c.global_share for c in loaded.clusters] == [c.global_share for c in original.clusters]
    assert [c.counterfeits for c in loaded.clusters] == [1, 0]
    assert loaded.global_bag == {"herpes": 1} and loaded.label == "2024"
    assert loaded.population_rates == original.population_rates
    assert loaded.private_terms == original.private_terms
    (ledger,) = await load_ledgers(session, [model])
    assert [(c.counterfeit_rows, c.bp, c.fp2, c.individuals) for c in ledger.clusters] == [
        ([1], 1, 0, ["k1", None]),
        ([], 0, 2, ["k2", "k3", None]),
    ]
    assert await ReleaseRepository(session).counterfeit_rows(model.id) == 3


async def test_rows_use_the_term_dictionary_and_an_indexed_hash(session: AsyncSession) -> None:
    series = await factories.series(session)
    await store_publication(
        session,
        series_id=series.id,
        method="sanony",
        params={},
        publication=factories.publication(1),
        job_id=None,
    )
    await store_publication(
        session,
        series_id=series.id,
        method="sanony",
        params={},
        publication=factories.publication(2),
        job_id=None,
    )
    terms = await session.scalar(
        select(func.count())
        .select_from(Term)
        .where(Term.term.in_(["abuse", "arson", "fraud", "theft", "vandal"]))
    )
    assert terms == 5
    digest = row_hash(("abuse", "arson"))
    same = (
        await session.scalars(select(PublishedRow).where(PublishedRow.terms_hash == digest))
    ).all()
    assert len(same) == 4 and len({r.cluster_pk for r in same}) == 2
    ids = await ensure_terms(session, ["abuse", "arson", "zebra"])
    assert set(ids) == {"abuse", "arson", "zebra"} and len(set(ids.values())) == 3


async def test_release_cache_is_bounded() -> None:
    cache = ReleaseCache(max_rows=8)
    for i in range(3):
        cache.put(i, factories.publication(i + 1).release)  # 5 rows each
    assert cache.get(0) is None and cache.get(2) is not None


async def test_release_cache_bound_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    from app.settings import Settings

    monkeypatch.setenv("SERIALPUB_RELEASE_CACHE_ROWS", "8")
    assert Settings().release_cache_rows == 8
    cache = ReleaseCache(max_rows=20)
    for i in range(3):
        cache.put(i, factories.publication(i + 1).release)  # 5 rows each
    cache.resize(Settings().release_cache_rows)  # as start_runtime does
    assert [cache.get(i) is not None for i in range(3)] == [False, False, True]


async def test_packed_releases_live_and_go_with_their_release() -> None:
    cache = ReleaseCache(max_rows=8)
    cache.put(0, factories.publication(1).release, packed=b"zero")
    cache.put_packed(1, b"one")  # not cached: not kept
    assert cache.get_packed(0) == b"zero" and cache.get_packed(1) is None
    cache.put(1, factories.publication(2).release)
    cache.put_packed(1, b"one")
    assert cache.get_packed(0) is None and cache.get_packed(1) == b"one"  # 0 evicted


async def test_statistics_file(session: AsyncSession) -> None:
    series = await factories.series(session, method="wong")
    written = await append_statistics(
        session, series.id, 1, {"k1": {"HIV": (8, 1)}, "k2": {"HIV": (8, 1)}}
    )
    await append_statistics(session, series.id, 2, {"k1": {"HIV": (10, 2), "cancer": (10, 1)}})
    assert written == 2
    everything = await load_statistics(session, series.id)
    assert everything == {
        "k1": {"HIV": [(8, 1), (10, 2)], "cancer": [(10, 1)]},
        "k2": {"HIV": [(8, 1)]},
    }
    assert await statistics_of(session, series.id, "k1") == {
        "HIV": [(1, 8, 1), (2, 10, 2)],
        "cancer": [(2, 10, 1)],
    }


async def test_round_trip_is_byte_identical(session: AsyncSession) -> None:
    """Store (binary COPY, term ids) then load (binary COPY): the same release, rendered to
    the same bytes. Empty rows, repeated rows, long rows, non-ASCII and awkward terms."""
    from app.core import model as core
    from app.io.rendering import render_release

    odd = ["naïve", "a,b", 'quo"te', "back\\slash", "tab\tin", "{brace}", "NULL", "日本"]
    rows: list[tuple[str, ...]] = [
        (),
        ("abuse",),
        tuple(odd),
        ("abuse",),
        (),
        tuple(f"t{i}" for i in range(300)),
        ("arson", "abuse"),
    ]
    clusters = [
        core.PublishedCluster(f"c{k + 1}", rows[k::2], {"herpes": k}, {"x": 1}, k % 2)
        for k in range(2)
    ]
    clusters.append(core.PublishedCluster("c3", [], {}, {}, 0))
    release = core.PublishedRelease(
        1, clusters, {"herpes": 1}, {"herpes": 0.5}, frozenset({"herpes"}), 0, "L"
    )
    ledger = core.ReleaseLedger(
        [core.ClusterLedger([0], 1, 0, 0, [None] * len(c.rows), {}) for c in clusters], {}, {}
    )
    series = await factories.series(session)
    model = await store_publication(
        session,
        series_id=series.id,
        method="sanony",
        params={},
        publication=core.Publication(release, ledger),
        job_id=None,
    )
    (loaded,) = await load_releases(session, [model], cache=None)
    assert [c.rows for c in loaded.clusters] == [c.rows for c in clusters]
    header = {"series": "s", "release_no": 1}
    assert render_release(header, loaded.clusters) == render_release(header, clusters)
    odd_hash = row_hash(tuple(odd))
    assert (
        await session.scalar(
            select(func.count())
            .select_from(PublishedRow)
            .where(PublishedRow.terms_hash == odd_hash)
        )
        == 1
    )

"""Reading releases back into core types, in bulk (``COPY ... TO STDOUT``).

Releases never change once stored, so loaded :class:`PublishedRelease` objects are kept in a
small per-process cache keyed by the release's primary key.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import orjson
from psycopg.types.json import set_json_loads
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.core import model as core
from app.db.models import Release, ReleaseLedger
from app.db.raw import driver_connection
from app.db.repositories.terms import terms_by_id

_T = TypeVar("_T")

__all__ = ["ReleaseCache", "load_releases", "load_ledgers", "RELEASE_CACHE"]


@dataclass(slots=True)
class _ClusterRow:
    pk: int
    release_id: int
    cluster_id: str
    private_counts: dict[str, int]
    global_share: dict[str, int]
    counterfeits: int


class ReleaseCache:
    """LRU of loaded public releases and their ledgers, bounded by their total number of rows.

    A job against ``k`` earlier releases needs all of them: the bound should hold a series'
    history (``SERIALPUB_RELEASE_CACHE_ROWS``, default 6M rows, about 1 GiB at 1M-row
    releases), else every job reads the evicted releases from PostgreSQL again.

    Beside a release it keeps the release and its ledger packed as a job's compute child
    receives them (:func:`app.jobs.handoff.pack_release`), so that a series' next job
    hands its history over without pickling it again. The bytes are evicted with their
    release; they add about 20 MB per 1M-row release without individuals (more with them: a
    64-character key per row in the ledger), measured by ``benchmarks/experiments/handoff.py``.
    """

    def __init__(self, max_rows: int = 2_000_000) -> None:
        self.max_rows = max_rows
        self._items: OrderedDict[int, core.PublishedRelease] = OrderedDict()
        self._ledgers: dict[int, core.ReleaseLedger] = {}
        self._packed: dict[int, bytes] = {}
        self._rows = 0

    def get(self, release_id: int) -> core.PublishedRelease | None:
        item = self._items.get(release_id)
        if item is not None:
            self._items.move_to_end(release_id)
        return item

    def get_ledger(self, release_id: int) -> core.ReleaseLedger | None:
        return self._ledgers.get(release_id)

    def get_packed(self, release_id: int) -> bytes | None:
        return self._packed.get(release_id)

    def put(
        self,
        release_id: int,
        release: core.PublishedRelease,
        ledger: core.ReleaseLedger | None = None,
        packed: bytes | None = None,
    ) -> None:
        """Keep ``release`` (with its ledger and packed form, when given)."""
        if release.n_rows > self.max_rows:
            return
        if ledger is not None and release_id not in self._ledgers:
            self._ledgers[release_id] = ledger
        if release_id in self._items:
            if packed is not None:
                self._packed.setdefault(release_id, packed)
            return
        self._items[release_id] = release
        if packed is not None:
            self._packed[release_id] = packed
        self._rows += release.n_rows
        self._evict()

    def put_ledger(self, release_id: int, ledger: core.ReleaseLedger) -> None:
        """Keep a ledger beside its cached release (none kept for a release not cached)."""
        if release_id in self._items:
            self._ledgers[release_id] = ledger

    def put_packed(self, release_id: int, packed: bytes) -> None:
        """Keep a packed release beside its cached release (not kept for one not cached)."""
        if release_id in self._items:
            self._packed[release_id] = packed

    def resize(self, max_rows: int) -> None:
        """Bound the cache to ``max_rows`` rows, evicting the least recently used releases."""
        self.max_rows = max_rows
        self._evict()

    def _evict(self) -> None:
        while self._rows > self.max_rows and self._items:
            old_id, old = self._items.popitem(last=False)
            self._ledgers.pop(old_id, None)
            self._packed.pop(old_id, None)
            self._rows -= old.n_rows

    def clear(self) -> None:
        self._items.clear()
        self._ledgers.clear()
        self._packed.clear()
        self._rows = 0


#: The process's cache; its bound is ``Settings.release_cache_rows``
#: (``SERIALPUB_RELEASE_CACHE_ROWS``), applied when the runtime starts (``start_runtime``).
RELEASE_CACHE = ReleaseCache(6_000_000)


async def load_releases(
    session: AsyncSession, models: Sequence[Release], *, cache: ReleaseCache | None = RELEASE_CACHE
) -> list[core.PublishedRelease]:
    """The public releases of ``models`` (same order), from the cache or the database."""
    if cache is None:
        return await _load_uncached(session, models)
    return await _through_cache(models, cache.get, lambda m: _load_uncached(session, m), cache.put)


async def _load_uncached(
    session: AsyncSession, models: Sequence[Release]
) -> list[core.PublishedRelease]:
    ids = [m.id for m in models]
    clusters = await _load_clusters(session, ids)
    packed_rows = await _load_rows(session, ids)
    # Equal rows share one packed string: decode each distinct one once.
    distinct = {row for rows in packed_rows.values() for row in rows}
    decoded = {row: row.split(",") if row else [] for row in distinct}
    wanted: set[str] = set()
    for ids_ in decoded.values():
        wanted.update(ids_)
    names = {str(k): v for k, v in (await terms_by_id(session, map(int, wanted))).items()}
    as_row = {row: tuple(map(names.__getitem__, ids_)) for row, ids_ in decoded.items()}
    by_release: dict[int, list[core.PublishedCluster]] = {i: [] for i in ids}
    for c in clusters:
        rows = [as_row[row] for row in packed_rows.get(c.pk, [])]
        by_release[c.release_id].append(
            core.PublishedCluster(
                c.cluster_id, rows, c.private_counts, c.global_share, c.counterfeits
            )
        )
    return [
        core.PublishedRelease(
            release_no=m.release_no,
            clusters=by_release[m.id],
            global_bag=dict(m.global_bag),
            population_rates=dict(m.population_rates),
            private_terms=frozenset(m.private_terms),
            global_counterfeits=m.global_counterfeits,
            label=m.label,
            counterfeit_rows=m.counterfeit_rows,
            suppression_beyond_budget=m.suppression_beyond_budget,
        )
        for m in models
    ]


async def _load_clusters(session: AsyncSession, release_ids: list[int]) -> list[_ClusterRow]:
    conn = await driver_connection(session)
    async with conn.cursor(binary=True) as cur:
        set_json_loads(orjson.loads, cur)
        await cur.execute(
            "SELECT id, release_id, cluster_id, private_counts, global_share, counterfeits "
            "FROM clusters WHERE release_id = ANY(%s::int8[]) ORDER BY release_id, position",
            (release_ids,),
        )
        return [_ClusterRow(*row) for row in await cur.fetchall()]


async def _load_rows(session: AsyncSession, release_ids: list[int]) -> dict[int, list[str]]:
    """Rows per cluster as packed term-id strings (``"3,17,42"``), aggregated server side
    into one value per cluster (``row;row;...``).

    A plain result set, not ``COPY ... TO STDOUT``: COPY hands back one message per row and
    psycopg wakes the event loop for each (at a million rows, most of the load's time);
    a result set is read and parsed in C in one go.
    """
    conn = await driver_connection(session)
    async with conn.cursor() as cur:
        await cur.execute(
            "SELECT r.cluster_pk, string_agg(array_to_string(r.term_ids, ','), ';' "
            "ORDER BY r.position) FROM published_rows r JOIN clusters c ON c.id = r.cluster_pk "
            "WHERE c.release_id = ANY(%s::int8[]) GROUP BY r.cluster_pk",
            (release_ids,),
        )
        return {int(pk): packed.split(";") for pk, packed in await cur.fetchall()}


async def load_ledgers(
    session: AsyncSession, models: Sequence[Release], *, cache: ReleaseCache | None = RELEASE_CACHE
) -> list[core.ReleaseLedger]:
    """The private ledgers of ``models`` (same order), from the cache or the database."""
    if cache is None:
        return await _load_ledgers(session, models)
    return await _through_cache(
        models, cache.get_ledger, lambda m: _load_ledgers(session, m), cache.put_ledger
    )


async def _through_cache(
    models: Sequence[Release],
    cached: Callable[[int], _T | None],
    load: Callable[[Sequence[Release]], Awaitable[list[_T]]],
    keep: Callable[[int, _T], None],
) -> list[_T]:
    """What the cache holds for ``models`` (same order); the rest loaded in one go and kept."""
    found = {m.id: cached(m.id) for m in models}
    missing = [m for m in models if found[m.id] is None]
    if missing:
        for m, value in zip(missing, await load(missing), strict=True):
            found[m.id] = value
            keep(m.id, value)
    return [value for value in (found[m.id] for m in models) if value is not None]


async def _load_ledgers(
    session: AsyncSession, models: Sequence[Release]
) -> list[core.ReleaseLedger]:
    ids = [m.id for m in models]
    if not ids:
        return []
    extra = {
        led.release_id: led
        for led in (
            await session.scalars(select(ReleaseLedger).where(ReleaseLedger.release_id.in_(ids)))
        )
    }
    conn = await driver_connection(session)
    by_release: dict[int, list[core.ClusterLedger]] = {i: [] for i in ids}
    async with conn.cursor(binary=True) as cur:
        set_json_loads(orjson.loads, cur)
        await cur.execute(
            "SELECT l.release_id, l.counterfeit_rows, l.bp, l.fp1, l.fp2, l.individuals, "
            "l.suppressed "
            "FROM cluster_ledgers l JOIN clusters c ON c.id = l.cluster_pk "
            "WHERE l.release_id = ANY(%s::int8[]) ORDER BY l.release_id, c.position",
            (ids,),
        )
        for release_id, cf_rows, bp, fp1, fp2, individuals, suppressed in await cur.fetchall():
            by_release[release_id].append(
                core.ClusterLedger(
                    list(cf_rows), bp, fp1, fp2, list(individuals), dict(suppressed or {})
                )
            )
    return [
        core.ReleaseLedger(
            clusters=by_release[i],
            global_bag_counterfeits=dict(extra[i].global_bag_counterfeits) if i in extra else {},
            suppressed=dict(extra[i].suppressed) if i in extra else {},
            randomness=dict(extra[i].randomness or {}) if i in extra else {},
        )
        for i in ids
    ]

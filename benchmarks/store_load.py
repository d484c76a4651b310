"""Store and load one synthetic release through the repository (not a test): wall, client
CPU and PostgreSQL backend CPU seconds per step, which machine load does not move.

A release of N rows (clusters of 10 rows drawn from BMS-WebView-2) is stored with
``store_publication`` and its renderings, committed, then loaded cold (no cache). The
database must be migrated (``DATABASE_URL=... python -m app migrate``).

    python -m benchmarks.store_load postgresql+psycopg://postgres@127.0.0.1:5432/bench 1000000
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
import time
from typing import Any

import psutil
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine

from app.core import model as core
from app.db.models import Release, Series
from app.db.repositories import release_load as rl
from app.db.repositories import release_store as rs
from app.io.corpora import BMS_WEBVIEW_2, corpus_file
from app.services.renderings import store_release_documents

DATA = corpus_file(BMS_WEBVIEW_2)
STEPS = ("ensure_terms", "_allocate_cluster_ids", "_copy_clusters", "_copy_rows", "_copy_ledgers")


def publication(n: int) -> core.Publication:
    with open(DATA) as f:
        base = [tuple(line.split()) for line in f.read().splitlines() if line.strip()]
    rng = random.Random(1)
    clusters, ledgers = [], []
    for c in range(n // 10):
        rows = [tuple(sorted(set(base[rng.randrange(len(base))]))) for _ in range(10)]
        clusters.append(core.PublishedCluster(f"c{c + 1}", rows, {"12345": 2}, {"555": 1}, 1))
        ledgers.append(core.ClusterLedger([3], 1, 0, 0, [None] * 10, {}))
    release = core.PublishedRelease(
        1, clusters, {"555": 10}, {"555": 0.5}, frozenset({"12345"}), 0, None
    )
    return core.Publication(release, core.ReleaseLedger(ledgers, {}, {}))


async def run(url: str, n: int) -> dict[str, Any]:
    pub = publication(n)
    engine = create_async_engine(url)
    out: dict[str, Any] = {}
    backend: list[psutil.Process | None] = [None]

    def clock() -> tuple[float, float, float]:
        b = backend[0].cpu_times() if backend[0] else None
        return time.perf_counter(), time.process_time(), (b.user + b.system) if b else 0.0

    def done(name: str, start: tuple[float, float, float]) -> None:
        end = clock()
        out[name] = [round(end[i] - start[i], 2) for i in range(3)]

    for name in STEPS:  # time the store's steps
        original = getattr(rs, name)

        def timed(*a: Any, __o: Any = original, __n: str = name, **k: Any) -> Any:
            async def inner() -> Any:
                start = clock()
                result = await __o(*a, **k)
                done(__n, start)
                return result

            return inner()

        setattr(rs, name, timed)

    async def attach(session: AsyncSession) -> None:
        backend[0] = psutil.Process(await session.scalar(text("SELECT pg_backend_pid()")))

    async with AsyncSession(engine, expire_on_commit=False) as session, session.begin():
        await attach(session)
        series = Series(
            name=f"store-load-{os.getpid()}", method="sanony", private_terms=["12345"], params={}
        )
        session.add(series)
        await session.flush()
        start = clock()
        model = await rs.store_publication(
            session, series_id=series.id, method="sanony", params={}, publication=pub, job_id=None
        )
        done("store_publication", start)
        start = clock()
        await store_release_documents(session, series.name, model, pub.release)
        done("documents", start)
    async with AsyncSession(engine, expire_on_commit=False) as session, session.begin():
        await attach(session)
        stored = await session.get(Release, model.id)
        assert stored is not None
        start = clock()
        (loaded,) = await rl.load_releases(session, [stored], cache=None)
        done("load_releases", start)
        start = clock()
        await rl.load_ledgers(session, [stored], cache=None)
        done("load_ledgers", start)
    assert [c.rows for c in loaded.clusters] == [c.rows for c in pub.release.clusters]
    out["load1"] = round(os.getloadavg()[0], 2)
    await engine.dispose()
    return out


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    print(json.dumps(asyncio.run(run(sys.argv[1], int(sys.argv[2])))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

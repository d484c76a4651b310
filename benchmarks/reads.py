"""Read benchmark (not a test): published releases and risk summaries under load, with wrk.

Starts an embedded PostgreSQL in a temporary directory (or uses ``--database-url``, which must
be empty or disposable), runs ``serialpub serve`` against it in a subprocess, and stores two
releases directly through the repository layer (``store_publication``; publishing a 1M-row
release through the full algorithm takes far longer than reading it): 10,000 and 1,000,000 rows
of BMS-WebView-2 transactions (cycled), clusters of 10. Then

1. ``wrk`` (a C load generator, so that the measured server is not starved by Python clients
   sharing the two cores) GETs the 10,000-row release with 50 connections: identity JSON, and
   with ``Accept-Encoding: gzip``;
2. ``curl`` GETs the 1M-row release: time to the first byte and throughput, first read and
   again, JSON and NDJSON;
3. ``curl`` GETs the risk summary of the 1M-row release twice (computed, then cached).

    python -m benchmarks.reads [--server-workers 2] [--duration 15] [--big-rows 1000000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from itertools import cycle, islice
from pathlib import Path
from typing import Any

import httpx

from benchmarks.medians import median_result
from benchmarks.service import ADMIN, DATA, server

__all__ = ["main", "build_publication", "wrk", "curl"]


def build_publication(n_rows: int, release_no: int = 1) -> Any:
    """A synthetic publication of ``n_rows`` BMS-WebView-2 transactions in clusters of 10,
    with a few private counts, a global bag and one BP counterfeit every 50 clusters."""
    from app.core.model import ClusterLedger, Publication, ReleaseLedger, release_from_counts

    lines = [
        tuple(sorted(set(line.split()))) for line in DATA.read_text().splitlines() if line.strip()
    ]
    rows = list(islice(cycle(lines), n_rows))
    clusters = [
        (rows[i : i + 10], {"p1": 1 + (i // 10) % 3}, {"p9": (i // 10) % 2}, int(i % 500 == 0))
        for i in range(0, n_rows, 10)
    ]
    release = release_from_counts(release_no, clusters, {"p9": 3}, {"p1": 0.2, "p9": 0.01})
    release.private_terms = frozenset({"p1", "p9"})
    release.label = f"{n_rows}-rows"
    ledger = ReleaseLedger(
        clusters=[
            ClusterLedger([0] if cf else [], cf, 0, 0, [None] * len(r)) for r, _, _, cf in clusters
        ],
    )
    return Publication(release=release, ledger=ledger)


async def store(url: str, series: str, n_rows: int, render: bool = True) -> tuple[float, float]:
    """Store a synthetic release of ``n_rows`` as the next release of ``series`` and render
    it, in one transaction as a publication job does; seconds of each."""
    from sqlalchemy import select
    from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine

    from app.db.models import Series
    from app.db.repositories.release_store import store_publication
    from app.services.renderings import store_release_documents

    publication = build_publication(n_rows)
    engine = create_async_engine(url)
    try:
        async with AsyncSession(engine, expire_on_commit=False) as session, session.begin():
            model = await session.scalar(select(Series).where(Series.name == series))
            assert model is not None
            started = time.perf_counter()
            release = await store_publication(
                session,
                series_id=model.id,
                method=model.method,
                params={"r_th": 2.0, "cluster_size": 10},
                publication=publication,
                job_id=None,
            )
            stored = time.perf_counter()
            if render:
                await store_release_documents(session, series, release, publication.release)
        return stored - started, time.perf_counter() - stored
    finally:
        await engine.dispose()


def _ms(value: str, unit: str) -> float:
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def wrk(
    url: str, headers: dict[str, str], *, connections: int, duration: int, threads: int = 2
) -> dict[str, float]:
    """p50/p99 (ms), requests/s and non-2xx count of ``wrk --latency`` against ``url``."""
    command = [
        "wrk",
        f"-t{threads}",
        f"-c{connections}",
        f"-d{duration}s",
        "--latency",
        "--timeout",
        "10s",
    ]
    for name, value in headers.items():
        command += ["-H", f"{name}: {value}"]
    out = subprocess.run([*command, url], check=True, capture_output=True, text=True).stdout
    latency = {m[0]: _ms(m[1], m[2]) for m in re.findall(r"\s(50|99)%\s+([\d.]+)(us|ms|s)\b", out)}
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {
        "p50_ms": latency["50"],
        "p99_ms": latency["99"],
        "rps": rps,
        "non_2xx": float(bad.group(1)) if bad else 0.0,
    }


def curl(url: str, headers: dict[str, str]) -> dict[str, float]:
    """Status, seconds to the first byte and in all, bytes and MB/s of one GET."""
    command = [
        "curl",
        "-s",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code} %{time_starttransfer} %{time_total} %{size_download}",
    ]
    for name, value in headers.items():
        command += ["-H", f"{name}: {value}"]
    out = subprocess.run([*command, url], check=True, capture_output=True, text=True).stdout
    status, first, total, size = out.split()
    return {
        "status": float(status),
        "first_byte_s": float(first),
        "total_s": float(total),
        "bytes": float(size),
        "mb_s": float(size) / 1e6 / float(total),
    }


async def _setup(base: str, url: str, big_rows: int) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=base, timeout=600) as client:
        for name in ("reads-10k", "reads-big", "reads-legacy"):
            response = await client.post(
                "/v1/series",
                headers=ADMIN,
                json={
                    "name": name,
                    "method": "sanony",
                    "private_terms": ["p1", "p9"],
                    "params": {"r_th": 2, "cluster_size": 10},
                },
            )
            response.raise_for_status()
        keys = {}
        for role in ("analyst", "auditor"):
            response = await client.post("/v1/keys", headers=ADMIN, json={"role": role})
            response.raise_for_status()
            keys[role] = {"Authorization": f"Bearer {response.json()['key']}"}
    await store(url, "reads-legacy", big_rows, render=False)
    return {
        "keys": keys,
        "store_small_s": await store(url, "reads-10k", 10_000),
        "store_big_s": await store(url, "reads-big", big_rows),
    }


def _etag(url: str, headers: dict[str, str]) -> str:
    response = httpx.head(url, headers=headers)
    response.raise_for_status()
    return response.headers.get("etag", '"none"')


def measure(base: str, setup: dict[str, Any], duration: int) -> dict[str, Any]:
    analyst, auditor = setup["keys"]["analyst"], setup["keys"]["auditor"]
    small = f"{base}/v1/series/reads-10k/releases/1"
    big = f"{base}/v1/series/reads-big/releases/1"
    result: dict[str, Any] = {"small_first": curl(small, analyst)}
    result["small_bytes"] = result["small_first"]["bytes"]
    result["small_gzip_bytes"] = curl(small, {**analyst, "Accept-Encoding": "gzip"})["bytes"]
    result["wrk_identity"] = wrk(small, analyst, connections=50, duration=duration)
    result["wrk_gzip"] = wrk(
        small, {**analyst, "Accept-Encoding": "gzip"}, connections=50, duration=duration
    )
    result["wrk_304"] = wrk(
        small,
        {**analyst, "If-None-Match": _etag(small, analyst)},
        connections=50,
        duration=duration,
    )
    # The floor of this machine at this moment: the same load on a route that does nothing.
    result["wrk_healthz"] = wrk(f"{base}/healthz", {}, connections=50, duration=duration)
    result["big_first"] = curl(big, analyst)
    result["big_again"] = curl(big, analyst)
    result["big_gzip"] = curl(big, {**analyst, "Accept-Encoding": "gzip"})
    result["big_ndjson"] = curl(f"{big}?format=ndjson", analyst)
    result["risk_first"] = curl(f"{big}/risk", auditor)
    result["risk_again"] = curl(f"{big}/risk", auditor)
    return result


def report(r: dict[str, Any], args: argparse.Namespace) -> str:
    def row(name: str, m: dict[str, float]) -> str:
        return (
            f"| {name} | {m['p50_ms']:.1f} | {m['p99_ms']:.1f} | {m['rps']:,.0f} | "
            f"{int(m['non_2xx'])} |"
        )

    def get(name: str, m: dict[str, float]) -> str:
        return (
            f"| {name} | {int(m['status'])} | {m['first_byte_s']:.3f} | {m['total_s']:.2f} |"
            f" {m['bytes'] / 1e6:,.1f} | {m['mb_s']:,.0f} |"
        )

    return "\n".join(
        [
            f"`python -m benchmarks.reads --server-workers {args.server_workers} --duration "
            f"{args.duration} --big-rows {args.big_rows}` on {os.cpu_count()} cores, "
            f"{args.server_workers} uvicorn process(es), "
            f"{'the PostgreSQL server given' if args.database_url else 'embedded PostgreSQL'} "
            f"on the same machine; load average at start {r['load_start']:.2f}. "
            f"Storing (COPY) / rendering (JSON + NDJSON, gzip) seconds: 10k "
            f"{r['store_small_s'][0]:.2f} / {r['store_small_s'][1]:.2f}, {args.big_rows:,} rows "
            f"{r['store_big_s'][0]:.2f} / {r['store_big_s'][1]:.2f}.",
            "",
            f"wrk, 2 threads, 50 connections, {args.duration} s, GET of the 10,000-row release "
            f"({r['small_bytes'] / 1024:,.0f} KiB JSON, {r['small_gzip_bytes'] / 1024:,.0f} KiB "
            f"gzip; first read {1000 * r['small_first']['total_s']:.0f} ms):",
            "",
            "| request | p50 ms | p99 ms | requests/s | non-2xx |",
            "|---|---:|---:|---:|---:|",
            row("JSON, identity", r["wrk_identity"]),
            row("JSON, Accept-Encoding: gzip", r["wrk_gzip"]),
            row("If-None-Match: 304", r["wrk_304"]),
            row("`/healthz` (no key, no work: the floor)", r["wrk_healthz"]),
            "",
            f"Access trail: {r.get('access_events', (0, 0))[1]:,} requests recorded in "
            f"{r.get('access_events', (0, 0))[0]:,} rows (docs/deploy.md, "
            '"The access trail").',
            "",
            f"curl, one GET at a time, the {args.big_rows:,}-row release and its risk summary:",
            "",
            "| request | status | first byte s | total s | MB | MB/s |",
            "|---|---:|---:|---:|---:|---:|",
            get("JSON, first read", r["big_first"]),
            get("JSON, again", r["big_again"]),
            get("JSON, gzip", r["big_gzip"]),
            get("NDJSON", r["big_ndjson"]),
            get("risk summary, first", r["risk_first"]),
            get("risk summary, again", r["risk_again"]),
            get("JSON, rendered on first read (no stored rendering)", r["big_lazy"]),
            "",
        ]
    )


async def _run(args: argparse.Namespace, data_dir: str) -> tuple[dict[str, Any], str]:
    from app.db.embedded import start_embedded
    from benchmarks.e2e_publish import database

    load_start = os.getloadavg()[0]
    # A server given: a fresh database on it (dropped afterwards), so that runs repeat.
    with database(args.database_url, f"bench_reads_{os.getpid()}") as fresh:
        url = fresh or start_embedded(Path(data_dir))
        return await _measure(args, data_dir, url, load_start)


async def _measure(
    args: argparse.Namespace, data_dir: str, url: str, load_start: float
) -> tuple[dict[str, Any], str]:
    with server(data_dir, url, args.server_log, args.server_workers) as base:
        setup = await _setup(base, url, args.big_rows)
        result = await asyncio.to_thread(measure, base, setup, args.duration)
        # The alternative to rendering at publication: a release stored without its
        # renderings (as before they existed) is rendered by its first read.
        result["big_lazy"] = await asyncio.to_thread(
            curl, f"{base}/v1/series/reads-legacy/releases/1", setup["keys"]["analyst"]
        )
    result.update(
        store_small_s=setup["store_small_s"],
        store_big_s=setup["store_big_s"],
        load_start=load_start,
        access_events=_access_events(url),
    )
    return result, report(result, args)


def _access_events(url: str) -> tuple[int, int]:
    """Rows the access trail wrote during the run, and the requests they record (each GET
    with a key above is one; identical ones within a write interval share a row)."""
    import psycopg

    from app.db.embedded import libpq_url

    with psycopg.connect(libpq_url(url)) as conn:
        row = conn.execute("SELECT count(*), sum(requests) FROM access_events").fetchone()
    return (int(row[0]), int(row[1] or 0)) if row else (0, 0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server-workers", type=int, default=2)
    parser.add_argument("--duration", type=int, default=15)
    parser.add_argument("--big-rows", type=int, default=1_000_000)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--server-log", type=Path, default=None)
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs, each on a fresh database; medians reported"
    )
    args = parser.parse_args(argv)
    for tool in ("wrk", "curl"):
        if shutil.which(tool) is None:
            print(f"{tool} is missing (apt-get install -y {tool})", file=sys.stderr)
            return 2
    results = []
    for run in range(max(args.repeat, 1)):
        with tempfile.TemporaryDirectory(prefix="serialpub-reads-") as data_dir:
            result, section = asyncio.run(_run(args, data_dir))
        results.append(result)
        if args.repeat > 1:
            print(f"run {run + 1} of {args.repeat}:\n\n{section}", flush=True)
    if args.repeat > 1:
        print(f"Medians of {args.repeat} runs (each figure on its own):\n")
        section = report(median_result(results), args)
    print(section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

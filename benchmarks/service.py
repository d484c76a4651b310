"""Service benchmark (not a test): upload-to-release phases and concurrent release reads.

Starts ``serialpub serve`` in a subprocess (an embedded PostgreSQL in a temporary directory
unless ``--database-url`` is given; that database must be empty or disposable), then

1. streams BMS-WebView-2 (from ``SERIALPUB_CORPORA_DIR``, never copied) as ``text/plain``
   uploads, release after release, and reads each job's seconds per phase;
2. publishes a release of about 10k rows and GETs it with 50 concurrent clients
   (p50, p99, requests per second).

    python -m benchmarks.service [--releases 2] [--clients 50] [--requests 2000]
                                 [--write docs/performance.md]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx

from app.io.corpora import BMS_WEBVIEW_2, corpus_file, missing

DATA = corpus_file(BMS_WEBVIEW_2)
TOKEN = "bench-admin-token-0123456789"
ADMIN = {"Authorization": f"Bearer {TOKEN}"}
PHASES = ("load", "anony", "bp", "fp1", "fp2", "verify", "store")
SERVER_PID = [0]


def _server_cpu() -> float:
    """CPU seconds used so far by the server process (and its children: uvicorn workers)."""
    import psutil

    process = psutil.Process(SERVER_PID[0])
    total = 0.0
    for p in (process, *process.children(recursive=True)):
        if "postgres" in p.name():
            continue
        times = p.cpu_times()
        total += times.user + times.system
    return total


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def service_env(data_dir: str, database_url: str | None, **settings: str) -> dict[str, str]:
    """The environment of a benchmarked service process: the admin token, quiet logs, its data
    folder, ``database_url`` (``None``: the embedded PostgreSQL) and further ``SERIALPUB_*``
    ``settings``."""
    env = {
        **os.environ,
        "SERIALPUB_ADMIN_TOKEN": TOKEN,
        "SERIALPUB_LOG_LEVEL": "WARNING",
        "SERIALPUB_DATA_DIR": data_dir,
        **settings,
    }
    env.pop("DATABASE_URL", None)
    if database_url:
        env["DATABASE_URL"] = database_url
    return env


@contextlib.contextmanager
def server(
    data_dir: str, database_url: str | None, log: Path | None = None, workers: int = 1
) -> Iterator[str]:
    """``serialpub serve`` in a subprocess on a free port; yields its base URL."""
    port = free_port()
    env = service_env(data_dir, database_url)
    sink = log.open("ab") if log else subprocess.DEVNULL
    process = subprocess.Popen(
        [sys.executable, "-m", "app", "serve", "--port", str(port), "--workers", str(workers)],
        env=env,
        stdout=sink,
        stderr=sink,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_ready(base, process)
        SERVER_PID[0] = process.pid
        yield base
    finally:
        process.terminate()
        process.wait(timeout=60)


def wait_ready(base: str, process: subprocess.Popen[bytes], seconds: float = 120) -> None:
    """Until ``/readyz`` answers 200; exits when the process dies or ``seconds`` pass."""
    for _ in range(int(seconds / 0.2)):
        if process.poll() is not None:
            raise SystemExit("the server exited during start-up (see its log)")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{base}/readyz", timeout=1).status_code == 200:
                return
        time.sleep(0.2)
    raise SystemExit("the server did not become ready")


def corpus_lines(fraction: float, seed: int) -> list[bytes]:
    lines = [line for line in DATA.read_bytes().splitlines() if line.strip()]
    if fraction >= 1:
        return lines
    return random.Random(seed).sample(lines, int(len(lines) * fraction))


async def _chunks(lines: list[bytes], size: int = 1 << 16) -> AsyncIterator[bytes]:
    buffer: list[bytes] = []
    length = 0
    for line in lines:
        buffer.append(line + b"\n")
        length += len(line) + 1
        if length >= size:
            yield b"".join(buffer)
            buffer, length = [], 0
    if buffer:
        yield b"".join(buffer)


async def _create_series(
    client: httpx.AsyncClient, name: str, lines: list[bytes], params: dict[str, Any]
) -> None:
    terms = sorted({t for line in lines for t in line.decode().split()})
    private = random.Random(7).sample(terms, max(1, len(terms) // 10))  # design.md §10: 10% private
    response = await client.post(
        "/v1/series",
        headers=ADMIN,
        json={"name": name, "method": "sanony", "private_terms": private, "params": params},
    )
    response.raise_for_status()


async def upload(client: httpx.AsyncClient, name: str, lines: list[bytes]) -> dict[str, Any]:
    """POST the lines (streamed), wait for the job; the phases and wall-clock seconds."""
    started = time.perf_counter()
    response = await client.post(
        f"/v1/series/{name}/releases",
        content=_chunks(lines),
        headers={**ADMIN, "Content-Type": "text/plain"},
    )
    posted = time.perf_counter()
    response.raise_for_status()
    job_id = response.json()["id"]
    while True:
        job = (await client.get(f"/v1/jobs/{job_id}", headers=ADMIN)).json()
        if job["status"] in ("succeeded", "failed"):
            break
        await asyncio.sleep(0.2)
    if job["status"] != "succeeded":
        raise SystemExit(f"publication failed: {job['error']}")
    done = time.perf_counter()
    release = (await client.get(f"/v1/series/{name}/releases", headers=ADMIN)).json()[-1]
    return {
        "release_no": job["release_no"],
        "lines": len(lines),
        "rows": release["n_rows"],
        "upload": posted - started,
        "total": done - started,
        "phases": job["phase_seconds"],
    }


class RawClient:
    """A minimal keep-alive HTTP/1.1 GET client: reads Content-Length bytes without parsing
    them, so that the load generator does not eat the CPU the server is measured on."""

    def __init__(self, base: str) -> None:
        host, _, port = base.removeprefix("http://").partition(":")
        self.host, self.port = host, int(port)
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def get(self, path: str) -> int:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        auth = ADMIN["Authorization"]
        self.writer.write(
            f"GET {path} HTTP/1.1\r\nHost: {self.host}\r\nAuthorization: {auth}\r\n\r\n".encode()
        )
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        await self.reader.readexactly(length)
        return status

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            await self.writer.wait_closed()


async def read_load(base: str, url: str, clients: int, requests: int) -> dict[str, float]:
    """``requests`` GETs of ``url`` by ``clients`` concurrent keep-alive connections."""
    latencies: list[float] = []
    remaining = iter(range(requests))

    async def one_client() -> None:
        raw = RawClient(base)
        try:
            for _ in remaining:
                started = time.perf_counter()
                if await raw.get(url) != 200:
                    raise SystemExit(f"GET {url} failed")
                latencies.append(time.perf_counter() - started)
        finally:
            await raw.close()

    started, cpu = time.perf_counter(), _server_cpu()
    await asyncio.gather(*(one_client() for _ in range(clients)))
    wall, cpu = time.perf_counter() - started, _server_cpu() - cpu
    latencies.sort()
    return {
        "p50_ms": 1000 * statistics.median(latencies),
        "p99_ms": 1000 * latencies[int(0.99 * (len(latencies) - 1))],
        "rps": len(latencies) / wall,
        "requests": len(latencies),
        "server_cpu_ms": 1000 * cpu / len(latencies),
    }


async def cold_history(base: str, name: str) -> float:
    """Seconds of a dry run of a two-line corpus on a freshly started server: loading the
    whole history from PostgreSQL (no cache yet) plus a trivial publication."""
    async with httpx.AsyncClient(base_url=base, timeout=3600) as client:
        started = time.perf_counter()
        response = await client.post(
            f"/v1/series/{name}/releases?dry_run=true",
            content=b"12345 67890\n12345\n",
            headers={**ADMIN, "Content-Type": "text/plain"},
        )
        response.raise_for_status()
        return time.perf_counter() - started


async def run(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="serialpub-bench-") as data_dir:
        result = await _run(args, data_dir)
        if args.releases:
            with server(data_dir, args.database_url, args.server_log, args.server_workers) as base:
                result["cold_load"] = await cold_history(base, "bms")
    return result


async def _run(args: argparse.Namespace, data_dir: str) -> dict[str, Any]:
    limits = httpx.Limits(max_connections=args.clients + 5)
    with server(data_dir, args.database_url, args.server_log, args.server_workers) as base:
        async with httpx.AsyncClient(base_url=base, timeout=3600, limits=limits) as client:
            full = corpus_lines(1.0, 0)
            await _create_series(client, "bms", full, {"cluster_size": 10, "seed": 7})
            uploads = []
            for k in range(args.releases):
                lines = full if k == 0 else corpus_lines(args.fraction, seed=k)
                uploads.append(await upload(client, "bms", lines))
                print(_upload_row(uploads[-1]), flush=True)
            small = full[: args.read_rows]
            await _create_series(client, "bms-read", small, {"cluster_size": 10, "seed": 7})
            read_release = await upload(client, "bms-read", small)
            url = f"/v1/series/bms-read/releases/{read_release['release_no']}"
            cold = time.perf_counter()
            body = (await client.get(url, headers=ADMIN)).content
            cold_ms = 1000 * (time.perf_counter() - cold)
            reads = await read_load(base, url, args.clients, args.requests)
            reads.update(cold_ms=cold_ms, bytes=len(body), rows=read_release["rows"])
    return {"uploads": uploads, "reads": reads}


def _upload_row(u: dict[str, Any]) -> str:
    phases = u["phases"]
    compute = sum(v for k, v in phases.items() if k not in ("load", "store"))
    io = phases.get("load", 0.0) + phases.get("store", 0.0)
    cells = [str(u["release_no"]), f"{u['lines']:,}", f"{u['rows']:,}", f"{u['upload']:.2f}"]
    cells += [f"{phases.get(p, 0.0):.2f}" for p in PHASES]
    cells += [f"{u['total']:.2f}", f"{io / (io + compute):.1%}" if io + compute else "-"]
    return "| " + " | ".join(cells) + " |"


def report(result: dict[str, Any], args: argparse.Namespace) -> str:
    r = result["reads"]
    head = (
        ["release", "lines", "rows", "upload+parse"]
        + list(PHASES)
        + ["end to end", "load+store share"]
    )
    lines = [
        "## Service",
        "",
        f"`python -m benchmarks.service --releases {args.releases} --clients {args.clients} "
        f"--requests {args.requests} --server-workers {args.server_workers}` on "
        f"{os.cpu_count()} cores, {args.server_workers} uvicorn process(es), each with its "
        "in-process job worker, embedded PostgreSQL unless stated. Seconds; BMS-WebView-2 as "
        "`text/plain` (release 1: the whole file; later releases: a seeded "
        f"{args.fraction:.0%} sample), sanony, 10% of the items private, default r_th.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
        *(_upload_row(u) for u in result["uploads"]),
        "",
        "`upload+parse` is the POST (streamed body parsed, job stored, 202); `load` reads the "
        "series' history, `store` writes the release (COPY) and commits; the share is "
        "(load + store) / (load + store + computation), target at most 25%. A worker keeps the "
        "releases it stored in memory, so `load` of release 2 reads no rows; "
        + (
            f"from a cold start, a dry run against the {len(result['uploads'])} stored releases "
            "(reading all their rows from PostgreSQL, then a trivial publication and its serial "
            f"risk against them) took {result['cold_load']:.2f} s."
            if "cold_load" in result
            else ""
        ),
        "",
        f"GET of a {r['rows']:,}-row release ({r['bytes'] / 1024:.0f} KiB JSON) by "
        f"{args.clients} concurrent clients, {r['requests']} requests: p50 "
        f"{r['p50_ms']:.1f} ms, p99 {r['p99_ms']:.1f} ms, {r['rps']:.0f} requests/s "
        f"(first, uncached read: {r['cold_ms']:.0f} ms); the server spent "
        f"{r['server_cpu_ms']:.1f} ms of CPU per request. The clients are raw keep-alive "
        "HTTP/1.1 connections on the same machine, sharing its cores.",
        "",
    ]
    return "\n".join(lines)


def _write(path: Path, section: str) -> None:
    text = path.read_text() if path.exists() else "# Performance\n\n"
    start = text.find("## Service")
    if start >= 0:
        end = text.find("\n## ", start + 1)
        text = text[:start] + section + (text[end + 1 :] if end >= 0 else "")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--releases", type=int, default=2)
    parser.add_argument("--fraction", type=float, default=0.8)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--read-rows", type=int, default=10_000)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--write", type=Path, default=None)
    parser.add_argument("--server-log", type=Path, default=None)
    parser.add_argument("--server-workers", type=int, default=1)
    args = parser.parse_args(argv)
    if not DATA.exists():
        print(missing(BMS_WEBVIEW_2), file=sys.stderr)
        return 2
    result = asyncio.run(run(args))
    section = report(result, args)
    print(section)
    if args.write:
        _write(args.write, section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Uploads and memory (not a test): peak RSS of the server while it reads a large upload.

Streams lines of BMS-WebView-2 (from ``SERIALPUB_CORPORA_DIR``, never copied), repeated up
to ``--bytes``, as a chunked ``text/plain`` POST (no Content-Length, as in the issue), and
samples the server's resident memory (its Python processes, not PostgreSQL's) every 20 ms:
before, at the peak, once the answer is back and a few seconds later.

    python -m benchmarks.upload_memory --bytes 268435456 [--no-worker] [--dry-run]
        [--database-url URL] [--env SERIALPUB_MAX_TRANSACTIONS=10000000 ...]
    python -m benchmarks.upload_memory --parse-only --bytes 60000000   # in-process parse
    python -m benchmarks.upload_memory --worst --no-worker   # densest lines the caps allow

``--no-worker`` runs the service with ``SERIALPUB_IN_PROCESS_WORKER=false``, so that the
figure is the upload's (parse, validation, job input) and not the publication's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import tempfile
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx

from benchmarks.medians import median_result
from benchmarks.service import ADMIN, DATA, SERVER_PID, server

CHUNK = 1 << 16


def _worst_case() -> bytes:
    """Lines as dense in term ids as the caps allow: 676 distinct two-letter terms a line
    (three bytes a term id), the most ids a body of a given size can carry."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    terms = [a + b for a in letters for b in letters]
    return ("\n".join(" ".join(terms[i:] + terms[:i]) for i in range(64)) + "\n").encode()


async def body(total: int, worst: bool = False) -> AsyncIterator[bytes]:
    """``total`` bytes of whole BMS-WebView-2 lines, the file repeated (no Content-Length);
    ``worst``: the densest lines instead (:func:`_worst_case`)."""
    data = _worst_case() if worst else DATA.read_bytes()
    sent = 0
    while sent < total:
        for start in range(0, len(data), CHUNK):
            chunk = data[start : start + CHUNK]
            if sent + len(chunk) >= total:
                chunk = chunk[: chunk.rfind(b"\n", 0, total - sent) + 1]
                if chunk:
                    yield chunk
                return
            sent += len(chunk)
            yield chunk


def _rss() -> int:
    import psutil

    process = psutil.Process(SERVER_PID[0])
    total = 0
    for p in (process, *process.children(recursive=True)):
        try:
            if "postgres" not in p.name():
                total += p.memory_info().rss
        except psutil.NoSuchProcess:
            continue
    return total


class Sampler:
    """The server's RSS every ``interval`` seconds, on a thread (the loop streams the body)."""

    def __init__(self, interval: float = 0.02) -> None:
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, _rss())
            time.sleep(self.interval)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


async def run_server(args: argparse.Namespace) -> dict[str, Any]:
    os.environ["SERIALPUB_IN_PROCESS_WORKER"] = "false" if args.no_worker else "true"
    for item in args.env:
        name, _, value = item.partition("=")
        os.environ[name] = value
    with tempfile.TemporaryDirectory() as data_dir, server(data_dir, args.database_url) as base:
        async with httpx.AsyncClient(base_url=base, timeout=3600) as client:
            await client.post(
                "/v1/series",
                headers=ADMIN,
                json={"name": "big", "private_terms": ["10307", "10311"]},
            )
            before = _rss()
            started = time.perf_counter()
            with Sampler() as sampler:
                query = "?dry_run=true" if args.dry_run else ""
                response = await client.post(
                    f"/v1/series/big/releases{query}",
                    content=body(args.bytes, args.worst),
                    headers={**ADMIN, "Content-Type": "text/plain"},
                )
                seconds = time.perf_counter() - started
                after = _rss()
                job = await _job(client, response.json()) if args.wait_job else {}
                await asyncio.sleep(3)
            settled = _rss()
    answer = response.json()
    return {
        "bytes": args.bytes,
        "worst": args.worst,
        "status": response.status_code,
        "seconds": round(seconds, 1),
        "answer": answer.get("error") or {k: answer.get(k) for k in ("status", "id")},
        "rss_before_mib": before >> 20,
        "rss_peak_mib": sampler.peak >> 20,
        "rss_after_mib": after >> 20,
        "rss_3s_later_mib": settled >> 20,
        "job": job,
    }


async def _job(client: httpx.AsyncClient, answer: dict[str, Any]) -> dict[str, Any]:
    """Polls the job to its end (the sampler keeps running: the publication's peak)."""
    if "id" not in answer:
        return {}
    while True:
        job = (await client.get(f"/v1/jobs/{answer['id']}", headers=ADMIN)).json()
        if job["status"] in ("succeeded", "failed"):
            return {
                "status": job["status"],
                "phase_seconds": job["phase_seconds"],
                "error": job["error"],
            }
        await asyncio.sleep(0.5)


async def run_parse(args: argparse.Namespace) -> dict[str, Any]:
    from app.services.ingest import Limits, read_corpus

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    corpus = await read_corpus(
        "text/plain",
        body(args.bytes, args.worst),
        limit=1 << 40,
        limits=Limits(max_transactions=1 << 40, max_terms_per_release=1 << 40),
    )
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    rows = len(corpus)
    return {
        "bytes": args.bytes,
        "rows": rows,
        "term_ids": len(corpus.compact.ids),
        "distinct_terms": len(corpus.compact.terms),
        "parse_s": round(seconds, 2),
        "parse_s_per_million_rows": round(seconds / rows * 1e6, 2),
        "arrays_mib": round(corpus.compact.nbytes() / 2**20, 1),
        "arrays_mib_per_million_rows": round(corpus.compact.nbytes() / 2**20 / rows * 1e6, 1),
        "rss_growth_mib": (peak - before) >> 10,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bytes", type=int, default=256 << 20)
    parser.add_argument("--no-worker", action="store_true")
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--wait-job", action="store_true", help="sample until the job ends")
    parser.add_argument("--parse-only", action="store_true")
    parser.add_argument("--worst", action="store_true", help="the densest lines the caps allow")
    parser.add_argument("--database-url")
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for the server")
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs (a fresh server each); then the medians"
    )
    args = parser.parse_args()
    results = []
    for _ in range(max(args.repeat, 1)):
        results.append(asyncio.run(run_parse(args) if args.parse_only else run_server(args)))
        print(json.dumps(results[-1], indent=1, ensure_ascii=False), flush=True)
    if args.repeat > 1:
        print(f"medians of {args.repeat} runs:")
        print(json.dumps(median_result(results), indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()

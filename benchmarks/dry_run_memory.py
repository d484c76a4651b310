"""A dry run's memory in the API process (not a test): peak RSS of ``serialpub serve`` while
a publisher's ``dry_run=true&wait=true`` is answered.

Starts, on a fresh database of ``--database-url``'s server (default ``TEST_DATABASE_URL``),
``serialpub serve`` without an in-process worker (compose's layout) and, beside it, one
``serialpub worker`` (where jobs run); posts ``--bytes`` of whole BMS-WebView-2 lines (from
``SERIALPUB_CORPORA_DIR``, the file repeated) as ``text/plain`` with ``dry_run=true&wait=true``,
and samples every 20 ms the resident memory of the API process alone and of the worker's
process tree (the worker and its compute child): before, at the peak, when the answer is
back and three seconds later.

    python -m benchmarks.dry_run_memory [--bytes 24000000] [--private-fraction 0.1]
        [--history 0] [--worst | --synthetic] [--database-url URL] [--repeat 1]
        [--json out.json]

24,000,000 bytes are about 830,000 lines and 3.8M term occurrences: the largest body the
default caps (``SERIALPUB_MAX_TERMS_PER_RELEASE`` 4,000,000) let in. ``--private-fraction``
of the corpus' distinct terms are the series' private terms (design.md §10 takes 10%);
``--history`` releases of the same body are published first (by the worker), so that the dry
run is judged against them. ``--worst``: the densest lines the caps allow instead (676
two-letter terms a line; 12,000,000 bytes are 3.9M terms). ``--synthetic``: 1,000,000 lines of
4 terms drawn uniformly (fixed seed) from 200,000 (``t0`` … ``t199999``), every default cap
reached at once (transactions, term occurrences, distinct terms) and nearly every line
distinct, unlike a repeated corpus file. Run it from any checkout: it starts ``python -m
app`` from the working directory's ``app`` package.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import psutil

from benchmarks.medians import median_result
from benchmarks.scale_out import fresh_database
from benchmarks.service import ADMIN, DATA, free_port, service_env, wait_ready
from benchmarks.upload_memory import _worst_case, body


def _rss(process: psutil.Process, tree: bool) -> int:
    """Resident bytes of ``process`` (and its children when ``tree``), PostgreSQL's aside."""
    total = 0
    for p in (process, *(process.children(recursive=True) if tree else ())):
        try:
            if "postgres" not in p.name():
                total += p.memory_info().rss
        except psutil.NoSuchProcess:
            continue
    return total


class Sampler:
    """Peak RSS of the API process and of the worker's tree, every ``interval`` seconds."""

    def __init__(self, api: psutil.Process, worker: psutil.Process, interval: float = 0.02):
        self.api, self.worker, self.interval = api, worker, interval
        self.api_peak = self.worker_peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.api_peak = max(self.api_peak, _rss(self.api, tree=False))
            self.worker_peak = max(self.worker_peak, _rss(self.worker, tree=True))
            time.sleep(self.interval)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _start(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    sink = log.open("ab")
    return subprocess.Popen([sys.executable, "-m", "app", *args], env=env, stdout=sink, stderr=sink)


#: ``--synthetic``: the default caps' transactions, terms a line and distinct terms.
_LINES, _WIDTH, _VOCABULARY = 1_000_000, 4, 200_000


def _synthetic() -> bytes:
    draw = random.Random(11)
    lines = (
        " ".join(f"t{n}" for n in draw.sample(range(_VOCABULARY), _WIDTH)) for _ in range(_LINES)
    )
    return ("\n".join(lines) + "\n").encode()


async def _chunks(data: bytes, size: int = 1 << 16) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def _upload(args: argparse.Namespace, synthetic: bytes | None) -> AsyncIterator[bytes]:
    return _chunks(synthetic) if synthetic is not None else body(args.bytes, args.worst)


def _private_terms(fraction: float, args: argparse.Namespace) -> list[str]:
    if args.synthetic:
        terms = [f"t{n}" for n in range(_VOCABULARY)]
    else:
        text = _worst_case().decode() if args.worst else DATA.read_text()
        terms = sorted({t for line in text.splitlines() for t in line.split()})
    return sorted(random.Random(7).sample(terms, max(1, int(len(terms) * fraction))))


async def _post(
    base: str, args: argparse.Namespace, api: psutil.Process, worker: psutil.Process
) -> dict[str, Any]:
    size = args.bytes
    async with httpx.AsyncClient(base_url=base, timeout=3600) as client:
        private = _private_terms(args.private_fraction, args)
        synthetic = _synthetic() if args.synthetic else None
        created = await client.post(
            "/v1/series", headers=ADMIN, json={"name": "big", "private_terms": private}
        )
        created.raise_for_status()
        for _ in range(args.history):
            published = await client.post(
                "/v1/series/big/releases?wait=true",
                content=_upload(args, synthetic),
                headers={**ADMIN, "Content-Type": "text/plain"},
            )
            assert published.status_code == 201, published.text
        before = _rss(api, tree=False)
        started = time.perf_counter()
        with Sampler(api, worker) as sampler:
            response = await client.post(
                "/v1/series/big/releases?dry_run=true&wait=true",
                content=_upload(args, synthetic),
                headers={**ADMIN, "Content-Type": "text/plain"},
            )
            seconds = time.perf_counter() - started
            after = _rss(api, tree=False)
            await asyncio.sleep(3)
        settled = _rss(api, tree=False)
    answer = response.json()
    return {
        "bytes": len(synthetic) if synthetic is not None else size,
        "private_terms": len(private),
        "history": args.history,
        "body": "synthetic" if args.synthetic else "worst" if args.worst else "bms-webview-2",
        "status": response.status_code,
        "seconds": round(seconds, 1),
        "rows": (answer.get("release") or {}).get("n_rows"),
        "error": answer.get("error"),
        "api_rss_before_mib": before >> 20,
        "api_rss_peak_mib": sampler.api_peak >> 20,
        "api_rss_after_mib": after >> 20,
        "api_rss_3s_later_mib": settled >> 20,
        "worker_tree_rss_peak_mib": sampler.worker_peak >> 20,
    }


def run(server: str, args: argparse.Namespace) -> dict[str, Any]:
    with fresh_database(server) as url, tempfile.TemporaryDirectory() as scratch:
        env = service_env(scratch, url, SERIALPUB_IN_PROCESS_WORKER="false")
        env["PYTHONPATH"] = os.getcwd()
        log = Path(scratch) / "service.log"
        port = free_port()
        api = _start(["serve", "--port", str(port)], env, log)
        worker = None
        try:
            base = f"http://127.0.0.1:{port}"
            wait_ready(base, api)
            worker = _start(["worker", "--concurrency", "1"], env, log)
            processes = psutil.Process(api.pid), psutil.Process(worker.pid)
            return asyncio.run(_post(base, args, *processes))
        finally:
            for process in (worker, api):
                if process is not None:
                    process.terminate()
                    process.wait(timeout=60)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bytes", type=int, default=24_000_000)
    parser.add_argument("--private-fraction", type=float, default=0.1)
    parser.add_argument("--history", type=int, default=0, help="releases published first")
    shape = parser.add_mutually_exclusive_group()
    shape.add_argument("--worst", action="store_true", help="the densest lines the caps allow")
    shape.add_argument("--synthetic", action="store_true", help="1M distinct lines, 4M terms")
    parser.add_argument("--database-url", default=os.environ.get("TEST_DATABASE_URL"))
    parser.add_argument("--repeat", type=int, default=1, help="runs; then the medians")
    parser.add_argument("--json", type=Path, help="write the results here too")
    args = parser.parse_args(argv)
    if not args.database_url:
        raise SystemExit("give --database-url (a server where databases may be created)")
    results = []
    for _ in range(max(args.repeat, 1)):
        results.append(run(args.database_url, args))
        print(json.dumps(results[-1], indent=1), flush=True)
    summary = median_result(results) if len(results) > 1 else results[0]
    if len(results) > 1:
        print(f"medians of {len(results)} runs:\n{json.dumps(summary, indent=1)}")
    if args.json:
        args.json.write_text(json.dumps({"runs": results, "median": summary}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

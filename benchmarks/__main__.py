"""What benchmarks there are: ``python -m benchmarks`` lists each with one line and its command.

The maintained set (``benchmarks/*.py``) measures the figures of docs/performance.md,
docs/evaluation.md, docs/attacks.md and docs/analysis.md; each runs by the one command listed
(``--help`` gives its options). ``benchmarks/experiments/`` holds experiments whose finding is
recorded (docs/lab/, ``benchmarks/experiments/results/``): they still run, to check a finding
again, but no current figure rests on them. Helpers (corpora, medians, the auditors' tools) are
imported by the benchmarks and are not run on their own.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Benchmark:
    module: str
    what: str
    command: str


#: The maintained benchmarks, each the source of a figure in the reference docs.
MAINTAINED: tuple[Benchmark, ...] = (
    Benchmark(
        "core_publish",
        "the core alone: Sanony per release on SeGen series of BMS-WebView-2; long series",
        "python benchmarks/core_publish.py --sizes 10000 20000 40000",
    ),
    Benchmark(
        "long_series",
        "the default guarantee over 20 releases of 20,000 rows: CPU, memory, what is read",
        "python -m benchmarks.long_series --label after",
    ),
    Benchmark(
        "true_rows_series",
        "one SeGen series at the default guarantee: refusals, copies withheld, per term counts",
        "python -m benchmarks.true_rows_series --corpus 1 --seed 1 --terms --out series.jsonl",
    ),
    Benchmark(
        "series_length_figure",
        "publish time and memory against release number, from core_publish --series runs",
        "python -m benchmarks.series_length_figure"
        " --results benchmarks/results/series_length.jsonl",
    ),
    Benchmark(
        "cover_growth",
        "what formula 12 reads when release k of a long series is published",
        "python -m benchmarks.cover_growth --releases 20 --size 20000",
    ),
    Benchmark(
        "anony_phase",
        "Sanony's anony phase on one long release, paired against another checkout",
        "python benchmarks/anony_phase.py --size 2000000 --repeat 3 --baseline /tmp/old",
    ),
    Benchmark(
        "prepare_phase",
        "the compute child's prepare phase (transactions from an upload) on one long release",
        "python benchmarks/prepare_phase.py --size 2000000 --repeat 3",
    ),
    Benchmark(
        "e2e_publish",
        "end to end through the service: per-phase seconds and memory at 100k to 10M lines",
        "python -m benchmarks.e2e_publish --sizes 100000 300000 1000000 --releases 5",
    ),
    Benchmark(
        "service",
        "upload-to-release phases and concurrent release reads through serialpub serve",
        "python -m benchmarks.service --releases 2 --clients 50 --requests 2000",
    ),
    Benchmark(
        "first_answers",
        "README's walkthrough on a freshly started serve, and the demo until its address",
        "python -m benchmarks.first_answers --repeat 5",
    ),
    Benchmark(
        "upload_caps",
        "a 1M-line snapshot at the default caps through serve and one worker; refused uploads",
        "python -m benchmarks.upload_caps",
    ),
    Benchmark(
        "core_scaling",
        "the core as the compute child runs it, release by release: seconds and peak per "
        "phase, digests of each release (before/after byte-identity)",
        "python -m benchmarks.core_scaling --lines 1000000 --releases 3 --cache /tmp/core1m",
    ),
    Benchmark(
        "child_phases",
        "where a compute child's memory goes, phase by phase, on a 1M-line release",
        "python -m benchmarks.child_phases --lines 1000000 --terms 10",
    ),
    Benchmark(
        "upload_memory",
        "peak RSS of the server while it reads a large upload",
        "python -m benchmarks.upload_memory --bytes 268435456",
    ),
    Benchmark(
        "dry_run_memory",
        "peak RSS of the API process while a dry run is answered",
        "python -m benchmarks.dry_run_memory --bytes 24000000",
    ),
    Benchmark(
        "reads",
        "published releases and risk summaries under load (wrk): requests/s and p99",
        "python -m benchmarks.reads --server-workers 2 --duration 15",
    ),
    Benchmark(
        "scale_out",
        "serialpub worker processes on one PostgreSQL: releases per minute by workers",
        "python -m benchmarks.scale_out --series 4 --releases 3",
    ),
    Benchmark(
        "split_judging",
        "two processes splitting the judging of a series (by release) and of one release",
        "python -m benchmarks.split_judging --releases 20 --size 20000",
    ),
    Benchmark(
        "store_load",
        "store and load one release through the repository: wall, client and server CPU",
        "python -m benchmarks.store_load"
        " postgresql+psycopg://postgres@127.0.0.1:5432/bench 1000000",
    ),
    Benchmark(
        "handoff_identity",
        "the served releases of a small series of every method as SHA-256, to compare commits",
        "python -m benchmarks.handoff_identity --database-url URL > after.json",
    ),
    Benchmark(
        "storage_size",
        "disk per published row in PostgreSQL, for sizing a deployment",
        "python -m benchmarks.storage_size --lines 100000 --releases 5",
    ),
    Benchmark(
        "backup",
        "serialpub backup and restore timed on a database holding one large release",
        "python -m benchmarks.backup --database-url postgresql+psycopg://postgres@127.0.0.1/postgres",
    ),
    Benchmark(
        "restart_drill",
        "PostgreSQL restarted while a release is computed, stored, and between two posts",
        "python -m benchmarks.restart_drill --lines 300000",
    ),
    Benchmark(
        "evaluate",
        "the paper's evaluation (Figures 6-9): every method on the SeGen grid",
        "python -m benchmarks.evaluate --methods anony sanony kanony --jobs 2",
    ),
    Benchmark(
        "guarantee_frontier",
        "what each guarantee keeps for analysts at each r_th, on the SeGen grid",
        "python -m benchmarks.guarantee_frontier",
    ),
    Benchmark(
        "soundness",
        "SeGen series published and judged against the paper's adversary",
        "python -m benchmarks.soundness --grid --results grid.jsonl",
    ),
    Benchmark(
        "analyst_eval",
        "each release read through app.analysis against its raw snapshot",
        "python -m benchmarks.analyst_eval",
    ),
    Benchmark(
        "analysis_coverage",
        "how often the analyst's intervals hold the raw data",
        "python -m benchmarks.analysis_coverage",
    ),
    Benchmark(
        "attacks",
        "the semantic attack against every method, with the counterfeit-detection AUC",
        "python -m benchmarks.attacks",
    ),
    Benchmark(
        "audit_job",
        "the semantic audit in the publication job against publishing the release",
        "python -m benchmarks.audit_job --rows 50000 --releases 2",
    ),
    Benchmark(
        "frequency_detector",
        "the frequency detector of counterfeits on published SeGen series (AUC)",
        "python -m benchmarks.frequency_detector --work /tmp/fd",
    ),
    Benchmark(
        "frequency_series",
        "SeGen series for the frequency detector, in publish-local's layout",
        "python -m benchmarks.frequency_series --corpus 1 --size 3000 --releases 3 --seed 1",
    ),
    Benchmark(
        "disassociation",
        "disassociation as a method: time, memory and tlost per strategy",
        "python benchmarks/disassociation.py",
    ),
)

#: Experiments whose finding is recorded (docs/lab/); they run, but no current figure rests on them.
EXPERIMENTS: tuple[Benchmark, ...] = (
    Benchmark(
        "experiments.attack_counterfeits",
        "can the semantic adversary tell Sanony's counterfeits from true rows",
        "python -m benchmarks.experiments.attack_counterfeits --seeds 7 --json after.json",
    ),
    Benchmark(
        "experiments.counterfeit_floor",
        "how low the frequency detector can go on idealised counterfeits",
        "python -m benchmarks.experiments.counterfeit_floor --work /tmp/floor",
    ),
    Benchmark(
        "experiments.counterfeit_rarity",
        "whether counterfeits are told from true rows by how rare their set is",
        "python -m benchmarks.experiments.counterfeit_rarity --corpus 1 --size 3000 --releases 5",
    ),
    Benchmark(
        "experiments.context_levers",
        "which Sanony levers carry the cost of private terms in context against Anony",
        "python -m benchmarks.experiments.context_levers --plan main",
    ),
    Benchmark(
        "experiments.copies",
        "private copies published against true, release by release, per global_lift",
        "python -m benchmarks.experiments.copies --corpus 1 --size 3000 --releases 5 --seed 1",
    ),
    Benchmark(
        "experiments.escalation",
        "which series escalate to suppression beyond the budget, how far, at what cost",
        "python -m benchmarks.experiments.escalation"
        " --results benchmarks/experiments/results/escalation.json",
    ),
    Benchmark(
        "experiments.handoff",
        "the compute child's hand-off as pickled objects against packed bytes",
        "python -m benchmarks.experiments.handoff --lines 1000000 --against 0 4 --repeats 3",
    ),
    Benchmark(
        "experiments.suppression_bound",
        "the fewest copies any publisher must suppress, release by release",
        "python -m benchmarks.experiments.suppression_bound --corpus 2 --rep 0.8 --seed 1",
    ),
)

#: Modules the benchmarks import, not run on their own.
HELPERS = ("attack_data", "attack_report", "attack_runs", "auditor", "medians")


def listing() -> str:
    lines = ["Maintained benchmarks (each the source of a figure in docs/):", ""]
    for bench in MAINTAINED:
        lines += [f"  {bench.module:<22} {bench.what}", f"  {'':<22} $ {bench.command}"]
    lines += ["", "Experiments whose finding is recorded (docs/lab/):", ""]
    for bench in EXPERIMENTS:
        lines += [f"  {bench.module:<34} {bench.what}", f"  {'':<34} $ {bench.command}"]
    lines += ["", "Each takes --help. Helpers, imported only: " + ", ".join(HELPERS) + "."]
    return "\n".join(lines)


def main() -> int:
    print(listing())
    return 0


if __name__ == "__main__":
    sys.exit(main())

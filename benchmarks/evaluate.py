"""The evaluation of design.md §10 (the Sanony paper's section 4, Figures 6-9).

Serial corpora from BMS-WebView-1 (B1) and -2 (B2) with SeGen; every available method publishes
each series; measured: rows at risk (serial risk > r_th over the whole series), counterfeit
rate (counterfeit rows / published rows), utility (relative error of term-pair supports,
formula 21, over random reconstructions) and publish time per release. Sweeps of sz, rep and
r_th around the defaults (sz 5%, rep 40%, r_th 8, 5 releases, 10% private terms), several
seeds. Writes ``results.json``, ``results.md`` and the PNG figures.

    python -m benchmarks.evaluate --methods anony sanony kanony --jobs 2  # the grid (29 min)
    python -m benchmarks.evaluate --quick              # tiny sizes, for CI
    serialpub bench --quick --corpora B1 --experiments risk counterfeits
    python -m benchmarks.evaluate --corpora SYN --synthetic-size 5000 --quick

Methods kanony, scomp and inv run when their modules import, and are skipped with a note
otherwise. A method that fails on a series is recorded in the results; the exit status is
then 1 (2 for bad options or missing corpora).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tqdm import tqdm

from app.io.corpora import corpora_dir
from benchmarks.evaluation.config import (
    ALL_METHODS,
    DEFAULTS,
    KNOWN_CORPORA,
    QUICK,
    SWEEPS,
    CorpusSource,
    Plan,
    Setting,
    available_methods,
    load_corpus,
)
from benchmarks.evaluation.experiments import Unit, run_unit, warm_up
from benchmarks.evaluation.figures import write_figures
from benchmarks.evaluation.report import markdown_report
from benchmarks.evaluation.summary import lookup, summarise

__all__ = ["main", "build_parser"]

REPO = Path(__file__).resolve().parents[1]
EXPERIMENTS = ("risk", "counterfeits", "utility", "runtime")
#: Rough relative cost per row, to start the heaviest series first when running in parallel.
_WEIGHT = {
    "sanony": 10.0,
    "true_rows": 10.0,
    "kanony": 10.0,
    "scomp": 10.0,
    "inv": 3.0,
    "wong": 2.0,
    "anony": 1.0,
}


def _fraction(text: str) -> float:
    """``5%`` or ``0.05``."""
    value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a fraction in [0, 1] (or 0-100%)")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.evaluate",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="tiny sizes for CI: sz 0.25%%/0.5%%, 3 releases, 1 seed, 5 reconstructions",
    )
    p.add_argument(
        "--data-dir",
        type=Path,
        default=corpora_dir(),
        help="folder of bms-webview-1.dat and -2.dat (default: %(default)s, from "
        "SERIALPUB_CORPORA_DIR)",
    )
    p.add_argument(
        "--corpora",
        nargs="+",
        default=["B1", "B2"],
        metavar="CORPUS",
        help="B1, B2, SYN (synthetic) or LABEL=PATH (FIMI or JSON)",
    )
    p.add_argument("--synthetic-size", type=int, default=20_000)
    p.add_argument("--experiments", nargs="+", choices=EXPERIMENTS, default=list(EXPERIMENTS))
    p.add_argument("--methods", nargs="+", choices=ALL_METHODS, default=list(ALL_METHODS))
    p.add_argument(
        "--sweeps",
        nargs="*",
        choices=SWEEPS,
        default=list(SWEEPS),
        help="parameters to vary around the defaults (none: defaults only)",
    )
    p.add_argument("--sz", nargs="+", type=_fraction, help="sz values of the sz sweep")
    p.add_argument("--rep", nargs="+", type=_fraction, help="rep values of the rep sweep")
    p.add_argument("--r-th", nargs="+", type=float, help="r_th values of the r_th sweep")
    p.add_argument("--default-sz", type=_fraction)
    p.add_argument("--default-rep", type=_fraction)
    p.add_argument("--default-r-th", type=float)
    p.add_argument("--releases", type=int)
    p.add_argument("--private-fraction", type=_fraction)
    p.add_argument("--cluster-size", type=int, default=10)
    p.add_argument(
        "--anony-r-th",
        type=float,
        metavar="X",
        help="threshold of the Anony step of sanony and kanony (their param "
        "anony_r_th, capped at each setting's r_th; default: the methods' own, "
        "3/8 of r_th)",
    )
    p.add_argument("--seeds", type=int, help="number of seeds (series) per setting")
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--reconstructions", type=int)
    p.add_argument("--pairs-per-band", type=int)
    p.add_argument(
        "--bands-on",
        choices=("source", "snapshot"),
        default="source",
        help="read a pair's utility support band on the whole source corpus "
        "(default; pairs present in the release's snapshot) or on the snapshot",
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="worker processes (timings stay per process; more jobs than cores distorts them)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=REPO / "benchmarks" / "results" / "tmp" / "evaluation",
        help="folder of results.json, results.md (and figures)",
    )
    p.add_argument("--figures-dir", type=Path, help="folder of the PNG figures (default: --out)")
    p.add_argument("--no-figures", action="store_true")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument(
        "--from-json",
        type=Path,
        metavar="RESULTS",
        help="only redraw the figures and the markdown of an earlier results.json",
    )
    return p


def _pick(args: argparse.Namespace, name: str, key: str | None = None) -> Any:
    value = getattr(args, name)
    if value is not None:
        return value
    key = key or name
    return QUICK[key] if args.quick and key in QUICK else DEFAULTS[key]


def _sources(args: argparse.Namespace) -> list[CorpusSource]:
    sources = []
    for item in args.corpora:
        if "=" in item:
            label, path = item.split("=", 1)
            sources.append(CorpusSource(label, str(Path(path).resolve())))
        elif item in KNOWN_CORPORA:
            sources.append(CorpusSource(item, str((args.data_dir / KNOWN_CORPORA[item]).resolve())))
        elif item == "SYN":
            sources.append(CorpusSource("SYN", synthetic=args.synthetic_size))
        else:
            raise SystemExit(f"unknown corpus {item!r}: use B1, B2, SYN or LABEL=PATH")
    missing = [s.path for s in sources if s.path and not Path(s.path).exists()]
    if missing:
        raise SystemExit(
            f"corpus not found: {', '.join(missing)} (give --data-dir, or --corpora SYN)"
        )
    return sources


def build_plan(args: argparse.Namespace) -> Plan:
    default = Setting(
        _pick(args, "default_sz", "sz"),
        _pick(args, "default_rep", "rep"),
        _pick(args, "default_r_th", "r_th"),
    )
    sweeps = {
        name: [float(v) for v in _pick(args, name, f"{name}_values")]
        for name in SWEEPS
        if name in args.sweeps
    }
    methods, skipped = available_methods(list(args.methods))
    if args.anony_r_th is not None and not args.anony_r_th >= 1:
        raise SystemExit(f"--anony-r-th {args.anony_r_th:g}: must be at least 1")
    seeds = list(range(args.first_seed, args.first_seed + _pick(args, "seeds")))
    return Plan(
        corpora=_sources(args),
        default=default,
        sweeps=sweeps,
        methods=methods,
        seeds=seeds,
        releases=_pick(args, "releases"),
        private_fraction=_pick(args, "private_fraction"),
        cluster_size=args.cluster_size,
        reconstructions=_pick(args, "reconstructions"),
        pairs_per_band=_pick(args, "pairs_per_band"),
        experiments=list(args.experiments),
        bands_on=args.bands_on,
        skipped_methods=skipped,
        anony_r_th=args.anony_r_th,
    )


def units_of(plan: Plan) -> list[Unit]:
    return [
        Unit(
            source,
            setting,
            seed,
            method,
            plan.releases,
            plan.private_fraction,
            plan.cluster_size,
            "risk" in plan.experiments,
            "utility" in plan.experiments,
            plan.reconstructions,
            plan.pairs_per_band,
            plan.bands_on,
            plan.anony_r_th,
        )
        for source in plan.corpora
        for setting in plan.settings()
        for seed in plan.seeds
        for method in plan.methods
    ]


def run_units(units: list[Unit], jobs: int, progress: bool) -> list[dict[str, Any]]:
    """Run every unit (in ``jobs`` processes), with a progress bar on stderr."""
    methods = sorted({u.method for u in units})
    bar = tqdm(
        total=len(units),
        desc="series",
        unit="series",
        file=sys.stderr,
        disable=not progress,
        dynamic_ncols=True,
    )
    results: list[dict[str, Any]] = []
    with bar:
        if jobs <= 1:
            warm_up(methods)
            for unit in units:
                bar.set_postfix_str(_describe(unit), refresh=True)
                results.append(run_unit(unit))
                bar.update()
        else:
            sizes = {s: len(load_corpus(s)) for s in {u.corpus for u in units}}
            ordered = sorted(
                units, key=lambda u: -u.setting.sz * sizes[u.corpus] * _WEIGHT.get(u.method, 5.0)
            )
            with ProcessPoolExecutor(jobs, initializer=warm_up, initargs=(methods,)) as pool:
                futures = {pool.submit(run_unit, u): u for u in ordered}
                for future in as_completed(futures):
                    results.append(future.result())
                    bar.set_postfix_str(_describe(futures[future]), refresh=False)
                    bar.update()
    key = {
        (u.corpus.label, u.setting.sz, u.setting.rep, u.setting.r_th, u.seed, u.method): i
        for i, u in enumerate(units)
    }
    return sorted(
        results,
        key=lambda r: key[(r["corpus"], r["sz"], r["rep"], r["r_th"], r["seed"], r["method"])],
    )


def _describe(unit: Unit) -> str:
    s = unit.setting
    return (
        f"{unit.corpus.label} sz {s.sz * 100:g}% rep {s.rep * 100:g}% r_th {s.r_th:g} "
        f"seed {unit.seed} {unit.method}"
    )


def _headline(plan: Plan, summaries: list[dict[str, Any]]) -> list[str]:
    lines = []
    for source in plan.corpora:
        parts = []
        for method in plan.methods:
            e = lookup(summaries, source.label, plan.default, method)
            if not e:
                continue
            bits = []
            if e["rows_at_risk"]:
                bits.append(f"at risk {e['rows_at_risk']['mean']:.0f}")
            if e["counterfeit_rate"] and e["counterfeit_rate"]["mean"]:
                bits.append(f"counterfeits {e['counterfeit_rate']['mean']:.2%}")
            if e["mean_publish_seconds"]:
                bits.append(f"{e['mean_publish_seconds']['mean']:.2f} s/release")
            parts.append(f"{plan.method_label(method)}: {', '.join(bits)}")
        lines.append(f"{source.label} ({plan.default.label()}): " + "; ".join(parts))
    return lines


def _git_state() -> dict[str, Any]:
    """The commit the run measured, and the source files changed since (uncommitted)."""

    def git(*command: str) -> str:
        try:
            return subprocess.run(
                ["git", *command], cwd=REPO, capture_output=True, text=True, check=True, timeout=10
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    changed = [line[3:] for line in git("status", "--porcelain", "--", "app").splitlines()]
    return {"commit": git("rev-parse", "--short", "HEAD"), "uncommitted_app_files": changed}


def plan_from_json(data: dict[str, Any]) -> Plan:
    """The :class:`Plan` echoed in a results.json."""
    raw = dict(data)
    raw["corpora"] = [CorpusSource(**c) for c in raw["corpora"]]
    raw["default"] = Setting(**raw["default"])
    return Plan(**raw)


def redraw(args: argparse.Namespace) -> int:
    """``--from-json``: figures and markdown again from stored results, nothing recomputed."""
    document = json.loads(args.from_json.read_text(encoding="utf-8"))
    plan = plan_from_json(document["plan"])
    args.out.mkdir(parents=True, exist_ok=True)
    figures = write_figures(plan, document["summaries"], args.figures_dir or args.out)
    report = markdown_report(plan, document["summaries"], document["units"], document["meta"])
    (args.out / "results.md").write_text(report, encoding="utf-8")
    print(
        f"redrawn: {args.out / 'results.md'}; "
        f"figures: {', '.join(str(p) for p in figures.values())}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the evaluation; ``argv`` as on the command line (``None``: no options)."""
    argv = [] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    if args.from_json:
        return redraw(args)
    try:
        plan = build_plan(args)
    except SystemExit as exc:
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
            return 2
        raise
    for method, note in plan.skipped_methods.items():
        print(f"note: {method} {note}", file=sys.stderr)
    capped = sorted(
        {
            s.r_th
            for s in plan.settings()
            if plan.anony_r_th is not None and s.r_th < plan.anony_r_th
        }
    )
    if capped and plan.anony_r_th_note():
        print(
            f"note: --anony-r-th {plan.anony_r_th:g} is capped at r_th where r_th is lower "
            f"({', '.join(f'{v:g}' for v in capped)})",
            file=sys.stderr,
        )
    started = time.perf_counter()
    units = run_units(units_of(plan), args.jobs, not args.no_progress)
    summaries = summarise(units)
    meta = {
        "command": shlex.join(["python", "-m", "benchmarks.evaluate", *argv]),
        "wall_seconds": time.perf_counter() - started,
        "corpora": {s.label: len(load_corpus(s)) for s in plan.corpora},
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "jobs": args.jobs,
        "anony_r_th": plan.anony_r_th,
        "git": _git_state(),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    figures_dir = args.figures_dir or args.out
    figures = {} if args.no_figures else write_figures(plan, summaries, figures_dir)
    meta["figures"] = {k: str(v) for k, v in figures.items()}
    document = {"plan": asdict(plan), "meta": meta, "summaries": summaries, "units": units}
    (args.out / "results.json").write_text(json.dumps(document, indent=1), encoding="utf-8")
    (args.out / "results.md").write_text(
        markdown_report(plan, summaries, units, meta), encoding="utf-8"
    )
    for line in _headline(plan, summaries):
        print(line)
    print(
        f"results: {args.out / 'results.json'}, {args.out / 'results.md'}; "
        f"figures: {', '.join(str(p) for p in figures.values()) or 'none'}; "
        f"{meta['wall_seconds']:.1f} s"
    )
    failed = [u for u in units if u["status"] != "ok"]
    for u in failed:
        print(f"failed: {u['method']} on {u['corpus']}: {u['error']}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

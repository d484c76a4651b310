"""Two processes splitting the judging of a series and of one release (docs/scale-out.md).

The series: SeGen of BMS-WebView-2 (rep 40%, seed 1, 10% of the terms private), ``--releases``
releases of ``--size`` rows published in this process at the default guarantee with
``r_th`` 8; a release the guarantee refuses is left out, as a service stores nothing of it.
Then, ``--repeat`` times, alternated:

- **series, by release**: :func:`app.core.risk.assess.assess_series` of every release in one
  process, against :func:`app.cli_verify.assess_in_processes` with two (the releases dealt
  round-robin; each process builds the whole series' index);
- **one release, by cluster**: the last release judged whole in one process, against two
  forked processes that each build the index and the release's global posteriors (section
  2.3.2 reads the whole release) and judge half of its clusters' covers (formula 12).

Reported: wall seconds (medians), the speed-up of two over one, the CPU seconds of the
parent and its children, and the machine's load average before each run. Each run is
checked: the split judges the same risk as the whole.

    python -m benchmarks.split_judging [--releases 20] [--size 20000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import multiprocessing
import os
import resource
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.cli_verify import assess_in_processes
from app.core.errors import PublicationFailed
from app.core.history import SeriesHistory
from app.core.model import PublishedRelease, Transaction
from app.core.params import parse_params
from app.core.pipeline import publish
from app.core.risk.assess import assess_series, cluster_posteriors, global_posteriors
from app.core.risk.state import SeriesState
from app.core.segen import choose_private_terms, segen
from app.io.corpora import BMS_WEBVIEW_2, corpus_file
from app.io.corpus import read_corpus

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "split_judging.jsonl"

#: The series the forked processes read (inherited through fork, never pickled).
_SERIES: list[PublishedRelease] = []


def published_series(releases: int, size: int) -> list[PublishedRelease]:
    corpus = read_corpus(corpus_file(BMS_WEBVIEW_2))
    private = choose_private_terms([t for tr in corpus for t in tr.terms], 0.1, seed=1)
    params = parse_params("sanony", {"r_th": 8, "seed": 1})
    history = SeriesHistory()
    for number, positions in enumerate(segen(len(corpus), size, releases, 0.4, seed=1), 1):
        snapshot = [Transaction(corpus[p].terms, f"p{p}") for p in positions]
        try:
            publication = publish("sanony", history, snapshot, private, params)
        except PublicationFailed:
            print(f"release {number} refused; left out")
            continue
        history.add(publication.release, publication.ledger)
        print(f"release {number} published", flush=True)
    return history.releases


def _cluster_part(part: int, parts: int) -> float:
    """The highest β over the clusters ``part`` of ``parts`` of the last release, after the
    index and the release's global posteriors (what every part must build)."""
    state = SeriesState.from_published(_SERIES)
    j = len(state.releases) - 1
    glob = global_posteriors(state, j)
    best = max((max(b.values(), default=0.0) for b in glob.betas), default=0.0)
    for c in range(part, len(state.releases[j].clusters), parts):
        for betas in cluster_posteriors(state, (j, c)).values():
            best = max(best, max(betas.values(), default=0.0))
    return best


def release_phases() -> dict[str, float]:
    """Seconds of the three parts of judging the last release in one process: the index
    (every process builds it), the global posteriors (every process computes them) and the
    clusters' covers (what the processes divide)."""
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    state = SeriesState.from_published(_SERIES)
    seconds["index"] = time.perf_counter() - started
    j = len(state.releases) - 1
    started = time.perf_counter()
    global_posteriors(state, j)
    seconds["global"] = time.perf_counter() - started
    started = time.perf_counter()
    for c in range(len(state.releases[j].clusters)):
        cluster_posteriors(state, (j, c))
    seconds["clusters"] = time.perf_counter() - started
    return {k: round(v, 3) for k, v in seconds.items()}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(run: Callable[[], Any]) -> tuple[float, float, float, Any]:
    """Wall seconds, this process's CPU, its children's CPU, and the result."""
    load = os.getloadavg()[0]
    cpu, children, started = time.process_time(), _children_cpu(), time.perf_counter()
    result = run()
    return (
        time.perf_counter() - started,
        time.process_time() - cpu,
        _children_cpu() - children,
        (result, load),
    )


def release_by_clusters(processes: int) -> float:
    if processes == 1:
        return _cluster_part(0, 1)
    context = multiprocessing.get_context("fork")
    with context.Pool(processes) as pool:
        return max(pool.starmap(_cluster_part, [(p, processes) for p in range(processes)]))


def _commit() -> str:
    found = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    )
    return found.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--releases", type=int, default=20)
    parser.add_argument("--size", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    _SERIES[:] = published_series(args.releases, args.size)
    runs: dict[str, list[dict[str, float]]] = {}
    cases: dict[str, Callable[[], Any]] = {
        "series_1": lambda: assess_series(_SERIES, 8.0, with_rows=False),
        "series_2": lambda: assess_in_processes(_SERIES, 8.0, 2),
        "release_1": lambda: release_by_clusters(1),
        "release_2": lambda: release_by_clusters(2),
    }
    answers: dict[str, Any] = {}
    for _ in range(args.repeat):
        for name, run in cases.items():
            wall, cpu, children, (result, load) = _timed(run)
            runs.setdefault(name, []).append(
                {"wall": wall, "cpu": cpu, "children_cpu": children, "load": load}
            )
            answer = (
                [(r.max_serial_risk, r.rows_over_threshold) for r in result]
                if isinstance(result, list)
                else result
            )
            kind = name.split("_")[0]
            if answers.setdefault(kind, answer) != answer:
                raise SystemExit(f"{name} judged differently from one process")
            print(f"{name}: {wall:.2f} s wall, load {load:.1f}", flush=True)
    phases = [release_phases() for _ in range(args.repeat)]
    med = {
        name: {k: round(statistics.median(r[k] for r in rs), 3) for k in rs[0]}
        for name, rs in runs.items()
    }
    record = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": _commit(),
        "releases": len(_SERIES),
        "size": args.size,
        "repeat": args.repeat,
        "medians": med,
        "speedup_series": round(med["series_1"]["wall"] / med["series_2"]["wall"], 2),
        "speedup_release": round(med["release_1"]["wall"] / med["release_2"]["wall"], 2),
        "release_phases": {k: statistics.median(p[k] for p in phases) for k in phases[0]},
        "cpu_count": os.cpu_count(),
    }
    print(json.dumps(record, indent=1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("a") as f:
        f.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()

"""Benchmark of Sanony's anony phase on a long release, paired against an older tree.

The anony phase (clustering that continues the published lineages, then Anony) is the
largest phase of a 10,000,000-line release (docs/lab/ten-million-lines.md, "Ten million lines"), and
an end-to-end run of that size takes a quarter of an hour. This benchmark isolates it: it
publishes releases 1 to 4 of a SeGen series of BMS-WebView-2 (``--size`` rows, rep 40%, 10%
of the terms private, r_th 8, cluster size 10, the end-to-end benchmark's ``--seed``) once,
pickles the history, then times ``anonymise_corpus`` of release 5 in fresh processes,
alternating the code under test with ``--baseline`` (a tree holding an older ``app``
package, e.g. ``git archive <rev> app | tar -x -C DIR``). Equal rows share one ``frozenset``,
as the service's transactions do.

    python benchmarks/anony_phase.py --size 2000000 --repeat 3 --baseline /tmp/old

Each measurement is one JSON line appended to ``--out``: the tree, CPU seconds of the phase,
and a SHA-256 of its result (partition, copies per cluster, global bag), so that a change
meant to be exact shows the same digest. The summary prints the medians and their ratio.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parent.parent


def build(size: int, seed: int, path: Path) -> None:
    """Publish releases 1-4 and pickle the history with release 5's snapshot."""
    from app.core.history import SeriesHistory
    from app.core.model import Transaction
    from app.core.params import parse_params
    from app.core.pipeline import publish
    from app.core.segen import choose_private_terms, segen
    from app.io.corpora import BMS_WEBVIEW_2, corpus_file
    from app.io.corpus import read_corpus

    corpus = read_corpus(corpus_file(BMS_WEBVIEW_2))
    private = choose_private_terms([t for tr in corpus for t in tr.terms], 0.1, seed=seed)
    params = parse_params("sanony", {"r_th": 8, "cluster_size": 10, "seed": seed})
    history = SeriesHistory()
    snapshot: list[Transaction] = []
    for number, positions in enumerate(segen(len(corpus), size, 5, 0.4, seed=seed), 1):
        snapshot = [Transaction(corpus[p].terms, f"p{p}") for p in positions]
        if number == 5:
            break
        started = time.perf_counter()
        publication = publish("sanony", history, snapshot, private, params)
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
        print(f"release {number} built in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    with path.open("wb") as out:
        pickle.dump((history, snapshot, private, params), out, protocol=5)


def measure(path: Path) -> dict[str, object]:
    """Time ``anonymise_corpus`` of release 5 in this process (the tree on ``sys.path``)."""
    from app.core.model import Transaction
    from app.core.perturbation.sanony import anonymise_corpus

    with path.open("rb") as f:
        history, snapshot, private, params = pickle.load(f)
    shared: dict[frozenset[str], frozenset[str]] = {}
    snapshot = [Transaction(shared.setdefault(t.terms, t.terms), t.individual) for t in snapshot]
    gc.freeze()  # as the compute child does once its input is read
    started = time.process_time()
    result, partition = anonymise_corpus(snapshot, frozenset(private), params, 5, history.releases)
    seconds = time.process_time() - started
    digest = hashlib.sha256()
    for members, cluster in zip(partition, result.clusters, strict=True):
        digest.update(repr((list(members), sorted(cluster.private_counts.items()))).encode())
        digest.update(repr(sorted(cluster.global_share.items())).encode())
    digest.update(repr(sorted(result.global_bag.items())).encode())
    return {"cpu_seconds": round(seconds, 3), "digest": digest.hexdigest()[:16]}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=2_000_000)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="a tree with an older app package")
    parser.add_argument("--cache", type=Path, help="the pickled history (built when absent)")
    parser.add_argument("--label", default="", help="names the head's runs in --out")
    parser.add_argument("--out", type=Path, default=RESULTS / "anony_phase.jsonl")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure is not None:
        print(json.dumps(measure(args.measure)))
        return
    cache = args.cache or Path(tempfile.gettempdir()) / f"anony_phase_{args.size}_{args.seed}.pkl"
    if not cache.exists():
        build(args.size, args.seed, cache)
    trees = [("baseline", args.baseline)] if args.baseline is not None else []
    trees.append(("head", ROOT))
    runs: dict[str, list[float]] = {name: [] for name, _ in trees}
    for repeat in range(args.repeat):
        for name, tree in trees:
            env = {**os.environ, "PYTHONPATH": str(tree)}
            answer = subprocess.run(
                [sys.executable, __file__, "--measure", str(cache)],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            )
            record = {
                "tree": name,
                "label": args.label if name == "head" else str(tree),
                "size": args.size,
                "seed": args.seed,
                "repeat": repeat,
                "load1": round(os.getloadavg()[0], 2),
                **json.loads(answer.stdout),
            }
            runs[name].append(float(record["cpu_seconds"]))  # type: ignore[arg-type]
            args.out.parent.mkdir(parents=True, exist_ok=True)
            with args.out.open("a") as out:
                out.write(json.dumps(record) + "\n")
            print(json.dumps(record), file=sys.stderr, flush=True)
    medians = {name: statistics.median(values) for name, values in runs.items()}
    for name, values in runs.items():
        print(f"{name}: median {medians[name]:.2f} CPU s of {[round(v, 2) for v in values]}")
    if "baseline" in medians:
        print(f"head / baseline: {medians['head'] / medians['baseline']:.2f}")


if __name__ == "__main__":
    main()

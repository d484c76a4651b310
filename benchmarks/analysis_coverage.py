"""How often the analyst's intervals hold the raw data, on SeGen series of the corpora.

Each series (a corpus, a seed) is cut with SeGen (40% of a snapshot kept in the next, 10% of
the terms private), published with Sanony at ``r_th`` 8 and the defaults otherwise, and read
through ``app.analysis`` from its public documents. For every (public, private) pair of true
support at least 1 (and, apart, at least 5) it counts the true supports inside
``itemset_support``'s interval, and inside the placement model's ``expected ± 1.96 sd``, which
is not an interval the reader gives (it shows why: the model is not the data). Per release
also: private counts in ``term_count``'s interval, the share of private copies in the global
bag, the mean width of the pair intervals. The seeds are held out: no constant of the reader
was chosen on them (the bounds have none).

    python -m benchmarks.analysis_coverage                        # BMS-1 and -2, seeds 41-43
    python -m benchmarks.analysis_coverage --corpora 1 --seeds 7 --releases 2 --size 500
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from app.analysis import itemset_support, parse_release, term_count
from app.analysis.reader import _with_history
from app.core.history import SeriesHistory
from app.core.model import Transaction
from app.core.params import parse_params
from app.core.pipeline import publish
from app.core.segen import choose_private_terms, segen
from app.io.corpora import BMS_WEBVIEW_1, BMS_WEBVIEW_2, find_corpus, missing
from app.io.public import release_document
from app.methods.registry import get_method

CORPORA = {1: BMS_WEBVIEW_1, 2: BMS_WEBVIEW_2}


def publish_series(
    rows: list[list[str]], seed: int, releases: int, size: int
) -> tuple[list[dict[str, Any]], list[list[list[str]]], frozenset[str]]:
    """The public documents of a SeGen series of ``rows``, its snapshots, its private terms."""
    private = choose_private_terms([t for row in rows for t in row], 0.1, seed)
    snapshots = [[rows[p] for p in pos] for pos in segen(len(rows), size, releases, 0.4, seed)]
    params = parse_params("sanony", {"r_th": 8})
    echo = get_method("sanony").echo(params)
    history = SeriesHistory()
    documents = []
    for snapshot in snapshots:
        corpus = [Transaction.of(row) for row in snapshot]
        publication = publish("sanony", history, corpus, private, params)
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
        documents.append(release_document(publication.release, "coverage", "sanony", echo))
    return documents, snapshots, private


def measure(
    documents: list[dict[str, Any]], snapshots: list[list[list[str]]], private: frozenset[str]
) -> list[dict[str, Any]]:
    """Per release, the figures of the module's docstring."""
    out = []
    releases = _with_history(parse_release(d) for d in documents)
    for release, snapshot in zip(releases, snapshots, strict=True):
        truth = Counter(
            (p, s) for row in snapshot for s in set(row) & private for p in set(row) - private
        )
        counts = Counter(t for row in snapshot for t in row if t in private)
        estimates = {(p, s): itemset_support(release, [p], s) for p, s in truth}
        figures: dict[str, Any] = {"release_no": release.release_no, "rows": release.n_rows}
        figures["records"] = release.records
        figures["counts_inside"] = sum(term_count(release, s).contains(counts[s]) for s in private)
        figures["terms"] = len(private)
        figures["in_bag"] = sum(release.global_bag.values()) / max(1, release.private_copies())
        for least in (1, 5):
            held = [(estimates[k], n) for k, n in truth.items() if n >= least]
            figures[f"pairs_{least}"] = len(held)
            figures[f"inside_{least}"] = sum(e.contains(n) for e, n in held)
            figures[f"model_inside_{least}"] = sum(
                e.expected - 1.96 * e.sd <= n <= e.expected + 1.96 * e.sd for e, n in held
            )
            figures[f"width_{least}"] = sum(e.high - e.low for e, _ in held) / max(1, len(held))
        out.append(figures)
    return out


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", type=int, nargs="+", default=[1, 2], choices=[1, 2])
    parser.add_argument("--seeds", type=int, nargs="+", default=[41, 42, 43])
    parser.add_argument("--releases", type=int, default=5)
    parser.add_argument("--size", type=int, default=3000)
    parser.add_argument("--results", type=Path, help="write the figures here (JSON)")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {"args": {k: str(v) for k, v in vars(args).items()}, "series": []}
    for number in args.corpora:
        path = find_corpus(CORPORA[number])
        if path is None:
            sys.exit(missing(CORPORA[number]))
        with open(path, encoding="utf-8") as fh:
            rows = [line.split() for line in fh if line.strip()]
        for seed in args.seeds:
            series = measure(*publish_series(rows, seed, args.releases, args.size))
            results["series"].append({"corpus": number, "seed": seed, "releases": series})
            for r in series:
                print(
                    f"BMS-{number} seed {seed} release {r['release_no']}: {r['rows']} rows "
                    f"({r['records']} records), {r['in_bag']:.0%} of the copies in the bag; "
                    f"counts {r['counts_inside']}/{r['terms']}; pairs >= 1: "
                    f"{r['inside_1']}/{r['pairs_1']} (model {r['model_inside_1']}), pairs >= 5: "
                    f"{r['inside_5']}/{r['pairs_5']} (model {r['model_inside_5']}), "
                    f"mean width {r['width_5']:.1f}"
                )
    every = [r for s in results["series"] for r in s["releases"]]
    for least in (1, 5):
        n = sum(r[f"pairs_{least}"] for r in every)
        inside = sum(r[f"inside_{least}"] for r in every)
        model = sum(r[f"model_inside_{least}"] for r in every)
        print(
            f"pairs of support >= {least}: {inside}/{n} in the interval ({inside / n:.2%}); "
            f"expected ± 1.96 sd: {model}/{n} ({model / n:.2%})"
        )
    if args.results:
        args.results.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return results


if __name__ == "__main__":
    main()

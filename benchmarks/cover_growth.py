"""What formula 12 must read when release k of a series is published.

The target: release 20 of a 20 x 20,000 series costs at most 2x release 2. This
benchmark measures the part of the work that no implementation of the paper's adversary can
skip, release by release, on the series of ``core_publish.py --series`` (SeGen from
BMS-WebView-2, rep 40%, r_th 8, 10% of the terms private, seed 1):

- ``new_cover``: overlaps (Definition 6) of the new release's clusters with the clusters of
  the earlier releases. Formula 12's product for a cluster of release k runs over them, and
  each factor reads the new cluster's ``N(s, C*)`` and ``N(C*)``, which are not known before
  the release is built (and move with every counterfeit);
- ``published_linked``: published clusters that overlap the new release. Their posteriors
  gain a factor each;
- ``published_unsafe``: of them, those whose overlap with the new release is not safe for
  some term (Lemma 3: only these can change), and ``published_cover``, the overlaps their
  formula 12 runs over;
- ``floor_cpu_s``: CPU seconds to evaluate formula 12 once (``cluster_posteriors``) over
  every new cluster and every unsafe published cluster, after the release is out: one exact
  judging of the cluster compositions the release touched, without building anything;
- ``global_patterns`` and ``global_floor_cpu_s``: the global composition takes each whole
  release as one cluster whose cover is every other release, and a new release changes every
  release's cover. The distinct z-code patterns of the rows of all releases (a posterior is
  computed per pattern and term, over k - 1 factors), and the CPU seconds of one
  ``global_posteriors`` per release;
- ``publish_cpu_s`` and ``counterfeits``: what the publication itself took and added.

    python -m benchmarks.cover_growth                       # 20 x 20,000, a table on stdout
    python -m benchmarks.cover_growth --releases 5 --size 5000 --out /tmp/cover.jsonl

One JSON line per release is appended to ``--out`` (default
``benchmarks/results/cover_growth.jsonl``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from app.io.corpora import BMS_WEBVIEW_2, corpus_file

RESULTS = Path(__file__).resolve().parent / "results"


def growth(size: int, releases: int, rep: float, r_th: float, data: Path) -> Iterator[dict]:
    """Publish the series; after each release, what formula 12 reads for it."""
    from app.core.history import SeriesHistory
    from app.core.model import Transaction
    from app.core.params import parse_params
    from app.core.pipeline import publish
    from app.core.risk.assess import cluster_posteriors, global_posteriors
    from app.core.risk.incremental import unsafe_overlap
    from app.core.risk.overlap import cluster_cover
    from app.core.risk.state import SeriesState
    from app.core.segen import choose_private_terms, segen
    from app.io.corpus import read_corpus

    corpus = read_corpus(data)
    private = choose_private_terms([t for tr in corpus for t in tr.terms], 0.1, seed=1)
    params = parse_params("sanony", {"r_th": r_th, "cluster_size": 10, "seed": 1})
    history = SeriesHistory()
    for number, positions in enumerate(segen(len(corpus), size, releases, rep, seed=1), 1):
        snapshot = [Transaction(corpus[p].terms, f"p{p}") for p in positions]
        cpu = time.process_time()
        publication = publish("sanony", history, snapshot, private, params)
        cpu = time.process_time() - cpu
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
        state = SeriesState.from_published(history.releases)
        k = len(state.releases) - 1
        new_cover = 0
        linked: dict[tuple[int, int], bool] = {}
        for c, cluster in enumerate(state.releases[k].clusters):
            for overlap in cluster_cover(state, (k, c)):
                new_cover += 1
                old = state.cluster(overlap.other)
                unsafe = unsafe_overlap(cluster, old, overlap.size)
                linked[overlap.other] = linked.get(overlap.other, False) or unsafe
        unsafe_refs = sorted(ref for ref, unsafe in linked.items() if unsafe)
        published_cover = sum(len(cluster_cover(state, ref)) for ref in unsafe_refs)
        floor = time.process_time()
        for c in range(len(state.releases[k].clusters)):
            cluster_posteriors(state, (k, c))
        for ref in unsafe_refs:
            cluster_posteriors(state, ref)
        floor = time.process_time() - floor
        global_floor = time.process_time()
        patterns = sum(len(global_posteriors(state, j).betas) for j in range(k + 1))
        global_floor = time.process_time() - global_floor
        yield {
            "release": number,
            "clusters": len(state.releases[k].clusters),
            "new_cover": new_cover,
            "published_linked": len(linked),
            "published_unsafe": len(unsafe_refs),
            "published_cover": published_cover,
            "floor_cpu_s": round(floor, 3),
            "global_patterns": patterns,
            "global_floor_cpu_s": round(global_floor, 3),
            "publish_cpu_s": round(cpu, 3),
            "counterfeits": int(publication.report["counterfeits"]),  # type: ignore[call-overload]
        }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=20_000)
    parser.add_argument("--releases", type=int, default=20)
    parser.add_argument("--rep", type=float, default=0.4)
    parser.add_argument("--r-th", type=float, default=8.0)
    parser.add_argument("--data", type=Path, default=corpus_file(BMS_WEBVIEW_2))
    parser.add_argument("--out", type=Path, default=RESULTS / "cover_growth.jsonl")
    parser.add_argument("--label", default="", help="names the run in --out's lines")
    args = parser.parse_args()
    if not args.data.exists():
        sys.exit(f"benchmark corpus not found: {args.data}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    print(
        "| release | new cover | published linked | unsafe | their cover | floor CPU s "
        "| global patterns | global floor CPU s | publish CPU s | counterfeits |\n"
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    )
    for record in growth(args.size, args.releases, args.rep, args.r_th, args.data):
        line = {"label": args.label, "size": args.size, "rep": args.rep, **record}
        with args.out.open("a") as out:
            out.write(json.dumps(line) + "\n")
        print(
            f"| {record['release']} | {record['new_cover']:,} | {record['published_linked']:,} "
            f"| {record['published_unsafe']:,} | {record['published_cover']:,} "
            f"| {record['floor_cpu_s']} | {record['global_patterns']:,} "
            f"| {record['global_floor_cpu_s']} | {record['publish_cpu_s']} "
            f"| {record['counterfeits']:,} |",
            flush=True,
        )


if __name__ == "__main__":
    main()

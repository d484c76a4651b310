"""SeGen series for the frequency detector's benchmark, in publish-local's layout.

Each series is published as :mod:`benchmarks.soundness` publishes one (BMS-WebView-1 or -2,
private terms a seeded 10% of the vocabulary, rep 40%, Sanony with a ``seed``) and written as
``serialpub publish-local`` writes its output: ``release-001.json``, ... in ``DIR`` and the
ledgers in ``DIR.private`` beside it, so that ``serialpub verify DIR --ledger DIR.private``
reads it as is.

    python -m benchmarks.frequency_series --corpus 1 --size 3000 --releases 3 --seed 1 \\
        --out /tmp/fd/b1-3x3000-s1
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from app.core.history import SeriesHistory
from app.core.model import Transaction
from app.core.params import parse_params
from app.core.pipeline import publish
from app.core.segen import choose_private_terms, segen
from app.io.corpus import read_corpus
from app.io.ledger import default_ledger_dir, ledger_document
from app.io.public import release_document
from benchmarks.soundness import DATA


def build_series(
    corpus_no: int,
    size: int,
    releases: int,
    seed: int,
    out: Path,
    r_th: float = 8.0,
    counterfeits: str = "blend",
    counterfeit_counts: str = "cluster",
) -> Path:
    """Publish one SeGen series with Sanony into ``out`` (skipped when already there);
    ``counterfeits`` and ``counterfeit_counts``: Sanony's parameters (defaults ``blend`` and
    ``cluster``)."""
    if (out / f"release-{releases:03d}.json").exists():
        return out
    corpus = read_corpus(DATA / f"bms-webview-{corpus_no}.dat")
    private = choose_private_terms([t for tr in corpus for t in tr.terms], 0.1, seed=seed)
    params = parse_params(
        "sanony",
        {
            "r_th": r_th,
            "seed": seed,
            "counterfeits": counterfeits,
            "counterfeit_counts": counterfeit_counts,
        },
    )
    history = SeriesHistory()
    ledgers = default_ledger_dir(out)
    out.mkdir(parents=True, exist_ok=True)
    ledgers.mkdir(parents=True, exist_ok=True)
    for positions in segen(len(corpus), size, releases, 0.4, seed=seed):
        snapshot = [Transaction(corpus[p].terms, f"p{p}") for p in positions]
        started = time.perf_counter()
        publication = publish("sanony", history, snapshot, private, params)
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
        name = f"{publication.release.release_no:03d}.json"
        document = release_document(
            publication.release, "segen", "sanony", params.for_method("sanony")
        )
        (out / f"release-{name}").write_text(json.dumps(document), encoding="utf-8")
        (ledgers / f"ledger-{name}").write_text(
            json.dumps(ledger_document(publication.release, publication.ledger)), encoding="utf-8"
        )
        print(
            f"{out.name}: release {publication.release.release_no}, "
            f"{publication.release.n_rows} rows, {publication.ledger.counterfeit_rows} "
            f"counterfeits, {time.perf_counter() - started:.1f} s",
            flush=True,
        )
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--corpus", type=int, choices=(1, 2), default=1)
    p.add_argument("--size", type=int, default=3000)
    p.add_argument("--releases", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    build_series(args.corpus, args.size, args.releases, args.seed, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

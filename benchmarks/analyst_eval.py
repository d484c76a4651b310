"""What analysts read: each release read through ``app.analysis`` against
its raw snapshot, for Anony, Sanony (``global_lift`` least, the default) and Sanony with
``global_lift = "lemma4"`` (the ratchet of 0.1.0), and disassociation where the reader
can read it (it cannot: its chunks are refused, the reason is reported).

Per release: the share of published private copies inside clusters (the rest is the global
bag); copy distortion (L1 ``sum |published - true| / sum true`` over the private terms, net,
terms off by more than ``max(3, 20%)``); the share of private terms whose true count is in the
reader's interval (``term_count``); the pair error ``sum |expected - true| / sum true`` of the
reader's expected supports (``itemset_support``) over (public, private) pairs of true support
>= 5; the mean ``|est - true|`` of the confidence of rules public -> private (true support >= 5,
true confidence >= 0.1) with the confidence estimated from the reader's expected supports;
counterfeit rows. Per series: the auditors' judge's rows over ``r_th``.

    python -m benchmarks.analyst_eval                     # both corpora, the doc's series
    python -m benchmarks.analyst_eval --corpora 1 --sizes 300 --releases 2 --out /tmp/x
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from app.analysis import UnsupportedRelease, itemset_support, load_release, load_series, term_count
from app.core.errors import CoreError
from app.core.history import SeriesHistory
from app.core.model import Transaction
from app.core.params import parse_params
from app.core.pipeline import publish
from app.core.segen import choose_private_terms, segen
from app.io.corpus import read_corpus
from app.io.public import release_document
from app.methods.registry import get_method
from benchmarks.soundness import DATA, JUDGE

ROOT = Path(__file__).resolve().parents[1]
#: (label, method, extra parameters)
METHODS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("anony", "anony", {}),
    ("sanony", "sanony", {}),
    ("sanony-lemma4", "sanony", {"global_lift": "lemma4"}),
)
#: corpus -> (rows per release, releases): BMS-1 5 x 3,000; BMS-2 12 x 3,876 (sz 5%).
SERIES = {1: (3000, 5), 2: (3876, 12)}
MIN_SUPPORT = 5
MIN_CONFIDENCE = 0.1


def judge(folder: Path, timeout: float) -> int | str | None:
    """Rows over r_th by the auditors' reference judge (None when it is not at hand, a
    sentence when it did not finish within ``timeout`` seconds)."""
    if not JUDGE.exists():
        return None
    try:
        done = subprocess.run(
            [sys.executable, str(JUDGE), str(folder)],
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return f"not finished in {timeout:.0f} s"
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    if last.startswith("rows over r_th in the series"):
        return int(last.rsplit(":", 1)[1])
    return None


def publish_series(
    corpus: Sequence[Transaction],
    private: frozenset[str],
    size: int,
    releases: int,
    rep: float,
    r_th: float,
    seed: int,
    method: str,
    extra: dict[str, Any],
    out: Path,
) -> tuple[list[list[frozenset[str]]], dict[str, Any] | None]:
    """Publish a SeGen series into ``out`` (public JSON); the raw snapshots, and the failure."""
    params = parse_params(method, {"r_th": r_th, "seed": seed, **extra})
    history = SeriesHistory()
    snapshots: list[list[frozenset[str]]] = []
    out.mkdir(parents=True, exist_ok=True)
    for positions in segen(len(corpus), size, releases, rep, seed=seed):
        snapshot = [Transaction(corpus[p].terms, f"p{p}") for p in positions]
        try:
            publication = publish(method, history, snapshot, private, params)
        except CoreError as exc:
            return snapshots, {"release_no": history.next_release_no, "message": exc.message}
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
        snapshots.append([frozenset(t.terms) for t in snapshot])
        document = release_document(publication.release, "eval", method, params.for_method(method))
        name = f"release-{publication.release.release_no:03d}.json"
        (out / name).write_text(json.dumps(document), encoding="utf-8")
    return snapshots, None


def release_figures(release: Any, snapshot: list[frozenset[str]], private: frozenset[str]) -> dict:
    """What the reader says of one release, against its raw snapshot."""
    truth = Counter(s for row in snapshot for s in row & private)
    terms = sorted(set(truth) | (release.private_terms & private))
    published = {s: release.published_copies(s) for s in terms}
    total_true = sum(truth.values())
    in_clusters = sum(n for c in release.clusters for s, n in c.private_terms.items())
    all_published = sum(published.values())
    l1 = sum(abs(published[s] - truth[s]) for s in terms)
    off = sum(abs(published[s] - truth[s]) > max(3, 0.2 * truth[s]) for s in terms)
    covered = sum(term_count(release, s).contains(truth[s]) for s in terms)

    pairs: Counter[tuple[str, str]] = Counter()
    public: Counter[str] = Counter()
    for row in snapshot:
        pub = row - private
        public.update(pub)
        for s in row & private:
            pairs.update((p, s) for p in pub)
    common = {k: n for k, n in pairs.items() if n >= MIN_SUPPORT}
    expected = {k: itemset_support(release, [k[0]], k[1]).expected for k in common}
    pair_error = sum(abs(expected[k] - n) for k, n in common.items()) / max(sum(common.values()), 1)
    rules = {k: n / public[k[0]] for k, n in common.items() if n / public[k[0]] >= MIN_CONFIDENCE}
    with_x: dict[str, float] = {}
    errors = []
    for (p, s), confidence in rules.items():
        if p not in with_x:
            with_x[p] = itemset_support(release, [p]).expected
        estimate = expected[(p, s)] / with_x[p] if with_x[p] > 0 else 0.0
        errors.append(abs(estimate - confidence))
    counterfeits = release.counterfeit_rows_total
    if counterfeits is None:
        counterfeits = sum(c.counterfeits for c in release.clusters)
    return {
        "release_no": release.release_no,
        "rows": release.n_rows,
        "true_rows": len(snapshot),
        "counterfeit_rows": counterfeits,
        "counterfeit_share": counterfeits / max(release.n_rows, 1),
        "private_terms": len(terms),
        "true_copies": total_true,
        "published_copies": all_published,
        "in_clusters": in_clusters / max(all_published, 1),
        "l1": l1 / max(total_true, 1),
        "net": (all_published - total_true) / max(total_true, 1),
        "terms_off": off,
        "coverage": covered / max(len(terms), 1),
        "pairs": len(common),
        "pair_error": pair_error,
        "rules": len(rules),
        "confidence_error": statistics.fmean(errors) if errors else None,
    }


def chunk_counts(
    document: dict[str, Any],
) -> list[tuple[int, list[Counter[frozenset[str]]], Counter[str]]]:
    """Per cluster of a disassociated release: its size, its record chunks (each a Counter of
    sub-records) with the joint clusters' shared chunks it is part of, and its term chunk
    (each term counted once: the least the chunk says)."""
    shared: dict[str, list[Counter[frozenset[str]]]] = {}
    sizes = {c["id"]: int(c["size"]) for c in document["clusters"]}
    for joint in document.get("joint_clusters", []):
        chunks = [Counter(frozenset(r) for r in chunk) for chunk in joint["shared_chunks"]]
        # A shared chunk spans the joint cluster's records: put it on its first cluster.
        shared.setdefault(joint["clusters"][0], []).extend(chunks)
    out = []
    for c in document["clusters"]:
        chunks = [Counter(frozenset(r) for r in chunk if r) for chunk in c["record_chunks"]]
        out.append((sizes[c["id"]], chunks + shared.get(c["id"], []), Counter(c["term_chunk"])))
    return out


def disassociation_figures(
    document: dict[str, Any], snapshot: list[frozenset[str]], private: frozenset[str]
) -> dict[str, Any]:
    """What a disassociated release says, read from its chunks directly (the reader refuses
    it): a term's count is its records in the chunks plus one for a term-chunk mention; a
    pair's support is exact when one chunk holds both, else ``n_p n_s / size`` per cluster
    (independent chunks, as a random reconstruction of the chunks gives on average)."""
    clusters = chunk_counts(document)
    per_cluster: list[tuple[int, Counter[str], list[Counter[frozenset[str]]]]] = []
    total: Counter[str] = Counter()
    for size, chunks, term_chunk in clusters:
        counts: Counter[str] = Counter(term_chunk)
        for chunk in chunks:
            for record, n in chunk.items():
                for term in record:
                    counts[term] += n
        total.update(counts)
        per_cluster.append((size, counts, chunks))

    def pair(p: str, s: str) -> float:
        value = 0.0
        for size, counts, chunks in per_cluster:
            if not counts[p] or not counts[s]:
                continue
            together = [ch for ch in chunks if any(p in r for r in ch) and any(s in r for r in ch)]
            if together:
                value += sum(n for r, n in together[0].items() if p in r and s in r)
            else:
                value += counts[p] * counts[s] / max(size, 1)
        return value

    truth = Counter(s for row in snapshot for s in row & private)
    terms = sorted(set(truth) | (set(total) & private))
    total_true = sum(truth.values())
    published = sum(total[s] for s in terms)
    l1 = sum(abs(total[s] - truth[s]) for s in terms)
    off = sum(abs(total[s] - truth[s]) > max(3, 0.2 * truth[s]) for s in terms)
    pairs: Counter[tuple[str, str]] = Counter()
    public: Counter[str] = Counter()
    for row in snapshot:
        pub = row - private
        public.update(pub)
        for s in row & private:
            pairs.update((p, s) for p in pub)
    common = {k: n for k, n in pairs.items() if n >= MIN_SUPPORT}
    expected = {k: pair(*k) for k in common}
    pair_error = sum(abs(expected[k] - n) for k, n in common.items()) / max(sum(common.values()), 1)
    errors = [
        abs((expected[k] / total[k[0]] if total[k[0]] else 0.0) - n / public[k[0]])
        for k, n in common.items()
        if n / public[k[0]] >= MIN_CONFIDENCE
    ]
    return {
        "release_no": document["release_no"],
        "rows": int(document.get("n_records", len(snapshot))),
        "true_rows": len(snapshot),
        "counterfeit_rows": 0,
        "counterfeit_share": 0.0,
        "private_terms": len(terms),
        "true_copies": total_true,
        "published_copies": published,
        "in_clusters": 1.0,
        "l1": l1 / max(total_true, 1),
        "net": (published - total_true) / max(total_true, 1),
        "terms_off": off,
        "coverage": None,
        "pairs": len(common),
        "pair_error": pair_error,
        "rules": len(errors),
        "confidence_error": statistics.fmean(errors) if errors else None,
    }


def disassociation_series(
    corpus: Sequence[Transaction],
    private: frozenset[str],
    size: int,
    releases: int,
    rep: float,
    seed: int,
    out: Path,
) -> dict[str, Any]:
    """The same SeGen series disassociated (k 5, m 2), each release handed to the reader
    (which refuses it) and then read from its chunks directly."""
    method = get_method("disassociation")
    params = method.parse({"k": 5, "m": 2})
    history = SeriesHistory()
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    refused = None
    failure = None
    started = time.perf_counter()
    for positions in segen(len(corpus), size, releases, rep, seed=seed):
        snapshot = [Transaction(corpus[p].terms, f"p{p}") for p in positions]
        try:
            publication = publish(method.name, history, snapshot, private, params)
        except CoreError as exc:
            failure = {"release_no": history.next_release_no, "message": exc.message}
            break
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
        document = release_document(publication.release, "eval", method.name, method.echo(params))
        path = out / f"release-{publication.release.release_no:03d}.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        try:
            load_release(path)
        except UnsupportedRelease as exc:
            refused = str(exc)
        document = json.loads(path.read_text(encoding="utf-8"))
        rows.append(
            disassociation_figures(document, [frozenset(t.terms) for t in snapshot], private)
        )
    return {
        "releases_asked": releases,
        "refused": refused,
        "failure": failure,
        "publish_seconds": round(time.perf_counter() - started, 1),
        "releases": rows,
    }


def run(
    corpora: Sequence[int],
    sizes: dict[int, tuple[int, int]],
    rep: float,
    r_th: float,
    seed: int,
    out: Path,
    with_disassociation: bool = True,
    judge_timeout: float = 900.0,
) -> dict[str, Any]:
    results: dict[str, Any] = {"series": [], "disassociation": {}}
    for corpus_no in corpora:
        corpus = read_corpus(DATA / f"bms-webview-{corpus_no}.dat")
        private = choose_private_terms([t for tr in corpus for t in tr.terms], 0.1, seed=seed)
        size, releases = sizes[corpus_no]
        for label, method, extra in METHODS:
            folder = out / f"b{corpus_no}-{label}"
            started = time.perf_counter()
            snapshots, failure = publish_series(
                corpus, private, size, releases, rep, r_th, seed, method, extra, folder
            )
            published = time.perf_counter() - started
            rows = []
            if snapshots:
                read = load_series(folder)  # through the reader, as an analyst gets them
                rows = [
                    release_figures(r, s, private) for r, s in zip(read, snapshots, strict=True)
                ]
            series = {
                "corpus": corpus_no,
                "method": label,
                "size": size,
                "releases_asked": releases,
                "failure": failure,
                "judge_rows_over": judge(folder, judge_timeout) if snapshots else None,
                "publish_seconds": round(published, 1),
                "releases": rows,
            }
            results["series"].append(series)
            print(summary_line(series), flush=True)
        if with_disassociation:
            probe = disassociation_series(
                corpus, private, size, releases, rep, seed, out / f"b{corpus_no}-disassociation"
            )
            results["disassociation"][str(corpus_no)] = probe
            print(
                f"B{corpus_no} disassociation: {len(probe['releases'])} releases, refused by "
                f"the reader: {probe['refused']}",
                flush=True,
            )
    return results


def summary_line(series: dict[str, Any]) -> str:
    rows = series["releases"]
    l1 = statistics.median(r["l1"] for r in rows) if rows else float("nan")
    failure = f", refused at {series['failure']['release_no']}" if series["failure"] else ""
    return (
        f"B{series['corpus']} {series['method']}: {len(rows)} releases{failure}, median L1 "
        f"{l1:.3f}, judge {series['judge_rows_over']}, {series['publish_seconds']} s"
    )


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def _num(x: float | None, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


DISASSOCIATION = "disassociation (chunks)"


def all_series(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The row-publishing series, then disassociation's (read from chunks), alike."""
    every = list(results["series"])
    for corpus_no, probe in sorted(results["disassociation"].items()):
        every.append(
            {
                "corpus": int(corpus_no),
                "method": DISASSOCIATION,
                "releases_asked": probe["releases_asked"],
                "failure": probe["failure"],
                "judge_rows_over": None,
                "releases": probe["releases"],
            }
        )
    return every


def markdown(results: dict[str, Any], meta: dict[str, Any]) -> str:
    """The section of docs/evaluation.md."""
    lines = [
        "## What analysts read",
        "",
        "Each release read through the analyst's reader (`app.analysis`: `load_series`, "
        "`term_count`, `itemset_support`) from its public JSON, against the raw snapshot. "
        f"Command: `{meta['command']}` at commit {meta['commit']}, {meta['seconds']:.0f} s, "
        f"on {meta['machine']} (load average {meta['load_before']} before, "
        f"{meta['load_after']} after; shared machine). SeGen, rep {meta['rep']:.0%}, "
        f"r_th {meta['r_th']:g}, seed {meta['seed']}, 10% of the terms private; "
        + "; ".join(
            f"BMS-{k}: {n} releases of {size:,} rows" for k, (size, n) in meta["sizes"].items()
        )
        + ". Raw figures: `benchmarks/results/analyst_eval.json`.",
        "",
        "Columns: **in clusters** the share of the published private copies in the clusters' "
        "segments (`private_terms`; the rest is the global bag, which `global_share` only "
        "apportions); **L1** `Σ|published − true| / Σ "
        "true` over the private terms, **net** `(Σ published − Σ true) / Σ true`, **off** "
        "private terms off by more than max(3, 20%); **cover** the share of private terms whose "
        "true count is in `term_count`'s interval; **pair err** `Σ|expected − true| / Σ true` "
        f"of `itemset_support` over the (public, private) pairs of true support ≥ {MIN_SUPPORT} "
        f"(**pairs**); **conf err** the mean `|est − true|` confidence of the rules public → "
        f"private of true support ≥ {MIN_SUPPORT} and true confidence ≥ {MIN_CONFIDENCE} "
        "(**rules**), the estimate being expected support of the pair / expected support of "
        "the public term; **cf** counterfeit rows (% of the release's rows).",
        "",
    ]
    every = all_series(results)
    by_key = {(s["corpus"], s["method"]): s for s in every}
    lines += ["### Per series (medians over the releases)", ""]
    lines += [
        "| corpus | method | releases | judge: rows over r_th | cf | in clusters | L1 | net "
        "| off | cover | pair err | conf err |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in every:
        rows = s["releases"]

        def med(key: str, rows: list[dict[str, Any]] = rows) -> float | None:
            values = [r[key] for r in rows if r[key] is not None]
            return statistics.median(values) if values else None

        done = f"{len(rows)} of {s['releases_asked']}"
        if s["failure"]:
            done += f" (refused at {s['failure']['release_no']})"
        lines.append(
            f"| BMS-{s['corpus']} | {s['method']} | {done} | "
            f"{'-' if s['judge_rows_over'] is None else s['judge_rows_over']} | "
            f"{_pct(med('counterfeit_share'))} | {_pct(med('in_clusters'))} | "
            f"{_num(med('l1'))} | {_num(med('net'))} | {_num(med('terms_off'), 0)} | "
            f"{_pct(med('coverage'))} | {_num(med('pair_error'))} | "
            f"{_num(med('confidence_error'))} |"
        )
    lines += [""]
    for s in every:
        if s["failure"]:
            lines.append(
                f"BMS-{s['corpus']} {s['method']}: release {s['failure']['release_no']} was "
                f"refused: {s['failure']['message']}"
            )
            lines.append("")
    for corpus_no in sorted({s["corpus"] for s in every}):
        lines += [f"### BMS-{corpus_no}, per release", ""]
        lines += [
            "| method | release | rows | cf | in clusters | L1 | net | off | cover | pairs "
            "| pair err | rules | conf err |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for label in [m[0] for m in METHODS] + [DISASSOCIATION]:
            s = by_key.get((corpus_no, label))
            if s is None:
                continue
            for r in s["releases"]:
                lines.append(
                    f"| {label} | {r['release_no']} | {r['rows']:,} | "
                    f"{r['counterfeit_rows']} ({_pct(r['counterfeit_share'])}) | "
                    f"{_pct(r['in_clusters'])} | {_num(r['l1'])} | {_num(r['net'])} | "
                    f"{r['terms_off']} of {r['private_terms']} | {_pct(r['coverage'])} | "
                    f"{r['pairs']} | {_num(r['pair_error'])} | {r['rules']} | "
                    f"{_num(r['confidence_error'])} |"
                )
        lines += [""]
    for corpus_no, probe in sorted(results["disassociation"].items()):
        lines.append(
            f"**{DISASSOCIATION}** (k 5, m 2) on BMS-{corpus_no}: the same snapshots, each "
            "disassociated alone. The reader refuses its releases "
            f"(“{probe['refused']}”), so its figures are read from the chunks directly "
            "(`disassociation_figures`): a private term's count is its records in the record "
            "chunks plus one for a term-chunk mention (the least the chunk says; there is no "
            "global bag and no counterfeit row); a pair's support is exact when one record "
            "chunk holds both terms, else `n_p · n_s / size` per cluster (independent chunks). "
            "No interval is read from chunks (cover: -), and the judge reads rows, not chunks "
            "(judge: -; disassociation is a one-release method and makes no serial claim)."
        )
        lines.append("")
    return "\n".join(lines)


def figure(results: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    every = all_series(results)
    corpora = sorted({s["corpus"] for s in every})
    fig, axes = plt.subplots(1, len(corpora), figsize=(5.5 * len(corpora), 4), squeeze=False)
    for ax, corpus_no in zip(axes[0], corpora, strict=True):
        for s in every:
            if s["corpus"] != corpus_no or not s["releases"]:
                continue
            xs = [r["release_no"] for r in s["releases"]]
            ax.plot(xs, [r["l1"] for r in s["releases"]], marker="o", label=s["method"])
        ax.set_title(f"BMS-WebView-{corpus_no}")
        ax.set_xlabel("release")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel("copy distortion L1 (Σ|published − true| / Σ true)")
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


NOTES = ("<!-- notes: kept when the section is rewritten -->", "<!-- end of notes -->")


def write_section(doc: Path, section: str) -> None:
    """Put ``section`` into ``doc`` in place of the earlier one (or before the appendices),
    keeping the hand-written notes of the earlier one (between the ``NOTES`` markers) at the
    head of its tables."""
    text = doc.read_text(encoding="utf-8")
    header = "## What analysts read"
    notes = ""
    if header in text:
        before, rest = text.split(header, 1)
        after = rest[rest.find("\n## ") + 1 :] if "\n## " in rest else ""
        old = rest[: len(rest) - len(after)]
        if NOTES[0] in old and NOTES[1] in old:
            notes = old[old.index(NOTES[0]) : old.index(NOTES[1]) + len(NOTES[1])] + "\n\n"
    else:
        anchor = "## Appendix A"
        cut = text.find(anchor) if anchor in text else len(text)
        before, after = text[:cut], text[cut:]
    if notes:
        cut = section.index("### Per series")
        section = section[:cut] + notes + section[cut:]
    doc.write_text(before + section.rstrip() + "\n\n" + after, encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--corpora", type=int, nargs="+", choices=(1, 2), default=[1, 2])
    parser.add_argument("--sizes", type=int, nargs="*", default=None, help="rows per corpus")
    parser.add_argument("--releases", type=int, nargs="*", default=None)
    parser.add_argument("--rep", type=float, default=0.4)
    parser.add_argument("--r-th", type=float, default=8.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None, help="folder for the releases")
    parser.add_argument("--results", type=Path, default=None, help="JSON of the figures")
    parser.add_argument("--doc", type=Path, default=None, help="markdown to write the section to")
    parser.add_argument("--figure", type=Path, default=None)
    parser.add_argument("--no-disassociation", action="store_true")
    parser.add_argument("--judge-timeout", type=float, default=900.0, help="seconds a series")
    args = parser.parse_args(argv)
    sizes = dict(SERIES)
    for i, corpus_no in enumerate(args.corpora):
        size, releases = sizes[corpus_no]
        if args.sizes:
            size = args.sizes[min(i, len(args.sizes) - 1)]
        if args.releases:
            releases = args.releases[min(i, len(args.releases) - 1)]
        sizes[corpus_no] = (size, releases)
    out = args.out or Path(tempfile.mkdtemp(prefix="analyst-eval-"))
    load_before = " ".join(f"{x:.1f}" for x in os.getloadavg())
    started = time.perf_counter()
    results = run(
        args.corpora,
        sizes,
        args.rep,
        args.r_th,
        args.seed,
        out,
        not args.no_disassociation,
        args.judge_timeout,
    )
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    results["meta"] = {
        "command": " ".join(
            ["python -m benchmarks.analyst_eval", *(sys.argv[1:] if argv is None else argv)]
        ),
        "commit": commit or "?",
        "seconds": time.perf_counter() - started,
        "machine": f"{os.cpu_count()} cores, {platform.python_implementation()} "
        f"{platform.python_version()}",
        "load_before": load_before,
        "load_after": " ".join(f"{x:.1f}" for x in os.getloadavg()),
        "rep": args.rep,
        "r_th": args.r_th,
        "seed": args.seed,
        "sizes": {str(k): v for k, v in sizes.items() if k in args.corpora},
    }
    if args.results:
        args.results.parent.mkdir(parents=True, exist_ok=True)
        args.results.write_text(json.dumps(results, indent=1), encoding="utf-8")
    if args.figure:
        figure(results, args.figure)
    if args.doc:
        write_section(args.doc, markdown(results, results["meta"]))
    return results


if __name__ == "__main__":
    main()

"""One *unit* of the evaluation: a method publishing one SeGen series, and what it measures.

For a corpus, a setting ``(sz, rep, r_th)``, a seed and a method: SeGen draws the series
(positions into the corpus; individual ``p{position}``), the method publishes every release
through :func:`app.core.pipeline.publish` against the growing history, and the unit records per
release the rows, counterfeit rows (from the private ledger), publish time and phases, the
utility of the release (:mod:`benchmarks.evaluation.utility`) and, once the whole series is out,
the rows whose serial risk exceeds ``r_th`` (:func:`app.core.risk.assess.assess_series`: every
release against every other, earlier and later).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from app.core.history import SeriesHistory
from app.core.model import Publication, Transaction
from app.core.pipeline import publish
from app.core.risk.assess import assess_series
from app.core.segen import choose_private_terms, segen
from app.core.variants.inv import signatures_update
from app.core.variants.wong import statistics_update
from app.io.public import release_document
from benchmarks.auditor import JUDGE
from benchmarks.evaluation.config import (
    CorpusSource,
    Setting,
    load_corpus,
    method_params,
    synthetic_corpus,
)
from benchmarks.evaluation.utility import (
    BANDS,
    Pair,
    inv_value_terms,
    pair_supports,
    release_utility,
)

__all__ = ["Unit", "private_terms_of", "run_unit", "series_of", "source_supports", "warm_up"]


@dataclass(frozen=True, slots=True)
class Unit:
    """A method on one series: corpus, setting, seed and the run's common sizes."""

    corpus: CorpusSource
    setting: Setting
    seed: int
    method: str
    releases: int
    private_fraction: float
    cluster_size: int
    risk: bool
    utility: bool
    reconstructions: int
    pairs_per_band: int
    bands_on: str = "source"
    anony_r_th: float | None = None


_PRIVATE: dict[tuple[CorpusSource, float, int], frozenset[str]] = {}


def private_terms_of(source: CorpusSource, fraction: float, seed: int) -> frozenset[str]:
    """The seeded private terms of a corpus: the same for every method and setting."""
    key = (source, fraction, seed)
    if key not in _PRIVATE:
        corpus = load_corpus(source)
        _PRIVATE[key] = choose_private_terms([t for tr in corpus for t in tr.terms], fraction, seed)
    return _PRIVATE[key]


_SUPPORTS: dict[CorpusSource, Counter[Pair]] = {}


def source_supports(source: CorpusSource) -> Counter[Pair]:
    """Pair supports of the whole source corpus, where the utility bands are read."""
    if source not in _SUPPORTS:
        _SUPPORTS[source] = pair_supports(t.terms for t in load_corpus(source))
    return _SUPPORTS[source]


def series_of(unit: Unit) -> list[list[Transaction]]:
    """The SeGen snapshots of the unit, each transaction named after its corpus position."""
    corpus = load_corpus(unit.corpus)
    size = max(1, round(unit.setting.sz * len(corpus)))
    positions = segen(len(corpus), size, unit.releases, unit.setting.rep, seed=unit.seed)
    return [[Transaction(corpus[p].terms, f"p{p}") for p in release] for release in positions]


def _remember(history: SeriesHistory, publication: Publication) -> None:
    """What the service stores after a release: the release, its ledger, Wong's statistics
    file and Inv's signatures."""
    history.releases.append(publication.release)
    history.ledgers.append(publication.ledger)
    for individual, terms in statistics_update(publication).items():
        for term, entry in terms.items():
            history.statistics.setdefault(individual, {}).setdefault(term, []).append(entry)
    history.signatures.update(signatures_update(publication))


#: The auditors' reference judge, beside the repository (never copied into it).


def _release_record(
    number: int,
    snapshot: list[Transaction],
    publication: Publication,
    seconds: float,
    private: frozenset[str],
) -> dict[str, Any]:
    release, ledger, report = publication.release, publication.ledger, publication.report
    rows = release.n_rows
    counterfeits = ledger.counterfeit_rows
    record: dict[str, Any] = {
        "release": number,
        "true_rows": len(snapshot),
        "rows": rows,
        "counterfeits": counterfeits,
        "counterfeit_rate": counterfeits / rows if rows else 0.0,
        "global_bag_counterfeits": sum(ledger.global_bag_counterfeits.values()),
        "suppressed": sum(ledger.suppressed.values()),
        "private_copies": sum(len(t.terms & private) for t in snapshot),
        "clusters": len(release.clusters),
        "publish_seconds": seconds,
    }
    if isinstance(report.get("seconds"), dict):
        record["phase_seconds"] = report["seconds"]
    if isinstance(report.get("counterfeits_by_phase"), dict):
        record["counterfeits_by_phase"] = report["counterfeits_by_phase"]
    return record


def warm_up(methods: list[str]) -> None:
    """Publish a tiny two-release series with each method once, untimed, so that first-call
    costs (lazy imports, numpy set-up) do not land in the first measured release."""
    corpus = synthetic_corpus(200)
    private = choose_private_terms([t for tr in corpus for t in tr.terms], 0.1, 0)
    for method in methods:
        history = SeriesHistory()
        try:
            for start in (0, 50):
                snapshot = [
                    Transaction(t.terms, f"p{start + i}")
                    for i, t in enumerate(corpus[start : start + 100])
                ]
                params = method_params(method, 8.0, 10, 0)
                _remember(history, publish(method, history, snapshot, private, params))
        except Exception:  # a broken method is reported by the measured run itself
            continue
        assess_series(history.releases, 8.0, with_rows=False)


def run_unit(unit: Unit) -> dict[str, Any]:
    """Publish the unit's series and measure it; a failing method is recorded, not raised."""
    record: dict[str, Any] = {
        "corpus": unit.corpus.label,
        **asdict(unit.setting),
        "seed": unit.seed,
        "method": unit.method,
        "status": "ok",
    }
    private = private_terms_of(unit.corpus, unit.private_fraction, unit.seed)
    params = method_params(
        unit.method, unit.setting.r_th, unit.cluster_size, unit.seed, unit.anony_r_th
    )
    if params.anony_r_th is not None:
        record["anony_r_th"] = params.anony_r_th
    history = SeriesHistory()
    releases: list[dict[str, Any]] = []
    record["releases"] = releases
    for number, snapshot in enumerate(series_of(unit), start=1):
        started = time.perf_counter()
        try:
            publication = publish(unit.method, history, snapshot, private, params)
        except Exception as exc:  # recorded in the results; the run goes on with other units
            record["status"] = "failed"
            record["error"] = f"release {number}: {type(exc).__name__}: {exc}"
            return record
        seconds = time.perf_counter() - started
        _remember(history, publication)
        releases.append(_release_record(number, snapshot, publication, seconds, private))
        if unit.utility:
            started = time.perf_counter()
            releases[-1]["utility"] = release_utility(
                [t.terms for t in snapshot],
                publication.release,
                private,
                source=source_supports(unit.corpus) if unit.bands_on == "source" else None,
                values=inv_value_terms if unit.method == "inv" else None,
                per_band=unit.pairs_per_band,
                reconstructions=unit.reconstructions,
                seed=f"{unit.corpus.label}:{unit.setting}:{unit.seed}:{number}",
            )
            record["utility_seconds"] = record.get("utility_seconds", 0.0) + (
                time.perf_counter() - started
            )
    if unit.risk:
        started = time.perf_counter()
        risks = assess_series(history.releases, unit.setting.r_th, with_rows=False)
        record["risk_seconds"] = time.perf_counter() - started
        for entry, risk in zip(releases, risks, strict=True):
            entry["rows_at_risk"] = risk.rows_over_threshold
            entry["max_serial_risk"] = _finite(risk.max_serial_risk)
        judged = judge_rows_at_risk(history, unit)
        if judged is not None:
            for entry, rows in zip(releases, judged, strict=True):
                entry["judge_rows_at_risk"] = rows
    record.update(_totals(releases, unit))
    return record


def judge_rows_at_risk(history: SeriesHistory, unit: Unit) -> list[int] | None:
    """Rows over r_th per release by the auditors' reference judge (``../shared/auditor``),
    run on the public JSON of the releases; None where the judge is not at hand."""
    if not JUDGE.exists():
        return None
    with tempfile.TemporaryDirectory() as folder:
        for release in history.releases:
            document = release_document(
                release, "evaluation", unit.method, {"r_th": unit.setting.r_th}
            )
            name = f"release-{release.release_no:03d}.json"
            (Path(folder) / name).write_text(json.dumps(document), encoding="utf-8")
        done = subprocess.run(
            [sys.executable, str(JUDGE), folder], capture_output=True, text=True, check=False
        )
    found = [
        int(line.rsplit(":", 1)[1])
        for line in done.stdout.splitlines()
        if line.startswith("release ") and ": " in line
    ]
    return found if len(found) == len(history.releases) else None


def _finite(value: float) -> float | str:
    """JSON has no infinity: an unbounded risk (a posterior on a term of rate 0) is "inf"."""
    return value if math.isfinite(value) else "inf"


def _totals(releases: list[dict[str, Any]], unit: Unit) -> dict[str, Any]:
    rows = sum(r["rows"] for r in releases)
    counterfeits = sum(r["counterfeits"] for r in releases)
    rates = [r["counterfeit_rate"] for r in releases]
    seconds = [r["publish_seconds"] for r in releases]
    totals: dict[str, Any] = {
        "rows": rows,
        "true_rows": sum(r["true_rows"] for r in releases),
        "counterfeits": counterfeits,
        "counterfeit_rate": counterfeits / rows if rows else 0.0,
        "mean_release_rate": sum(rates) / len(rates),
        "worst_release_rate": max(rates),
        "suppressed": sum(r["suppressed"] for r in releases),
        "suppression_rate": sum(r["suppressed"] for r in releases)
        / max(sum(r["private_copies"] for r in releases), 1),
        "mean_publish_seconds": sum(seconds) / len(seconds),
        "total_publish_seconds": sum(seconds),
    }
    if unit.risk:
        totals["rows_at_risk"] = sum(r["rows_at_risk"] for r in releases)
        if all("judge_rows_at_risk" in r for r in releases):
            totals["judge_rows_at_risk"] = sum(r["judge_rows_at_risk"] for r in releases)
    if unit.utility:
        totals["utility"] = {band: _pooled(releases, band) for band in BANDS}
    return totals


def _pooled(releases: list[dict[str, Any]], band: str) -> dict[str, float | int | None]:
    """Mean re of a band over every pair of every release (pairs weigh equally)."""
    out: dict[str, float | int | None] = {}
    for key, count in (("re", "pairs"), ("re_private", "private_pairs")):
        parts = [r["utility"][band] for r in releases if r["utility"][band][key] is not None]
        n = sum(p[count] for p in parts)
        out[count] = n
        out[key] = sum(p[key] * p[count] for p in parts) / n if n else None
    return out

"""The experiments of ``benchmarks/attacks.py``: each returns plain rows (dicts) for the report."""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from app.core.attacks import (
    CooccurrenceRelatedness,
    EmbeddingRelatedness,
    Relatedness,
    counterfeit_auc,
    measure_private,
    reassociate_private,
    reconstruct,
    row_coherence,
    row_sources,
)
from app.core.attacks.anony_measures import Holds, holds_term
from app.core.attacks.breakage import GroundTruth
from app.core.disassociation import DisassociationParams, disassociate, tlost
from app.core.history import SeriesHistory
from app.core.model import PublishedRelease, ReleaseLedger, Transaction
from app.core.params import PublishParams
from app.core.pipeline import publish
from app.core.segen import choose_private_terms, segen
from benchmarks.attack_data import AttackCorpus

__all__ = ["ANONY_METHODS", "anony_style", "disassociation", "scorers", "spread", "timing"]

ANONY_METHODS = ("anony", "sanony", "kanony", "scomp", "wong", "inv")
SELECTIONS = ("aba", "mra", "rga")


def scorers(corpus: AttackCorpus, seed: int) -> tuple[dict[str, Relatedness], dict[str, float]]:
    """Offline NGD and skip-gram embeddings learnt from the background part, with their
    build times. Click-stream transactions are sets: the window covers a whole one."""
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    ngd = CooccurrenceRelatedness(corpus.background)
    seconds["ngd"] = time.perf_counter() - started
    started = time.perf_counter()
    window = 5 if corpus.has_meaning else 50
    we = EmbeddingRelatedness(
        corpus.background, seed=seed, window=window, sample=1e-3 if corpus.has_meaning else 0.0
    )
    seconds["we"] = time.perf_counter() - started
    return {"ngd": ngd, "we": we}, seconds


def disassociation(
    corpus: AttackCorpus,
    scoring: dict[str, Relatedness],
    ks: Sequence[int],
    ms: Sequence[int],
    limit: int,
    seed: int,
    vpa_budget: int,
) -> list[dict[str, Any]]:
    """Disassociate the published part (``adding``, MaxClusterSize 25) for each k and m and
    attack it with every selection and scoring, VPA and the random baseline."""
    published = random.Random(f"limit:{seed}").sample(
        corpus.published, min(limit, len(corpus.published))
    )
    rows: list[dict[str, Any]] = []
    for m in ms:
        for k in ks:
            params = DisassociationParams(k=k, m=m, max_cluster_size=max(25, 2 * k + 1))
            started = time.perf_counter()
            result = disassociate(published, params)
            publish_s = time.perf_counter() - started
            release = result.public()
            base = {"corpus": corpus.name, "k": k, "m": m, "tlost": tlost(published, result)}
            truth = GroundTruth(published, result)
            runs: list[tuple[str, str, Relatedness | None, bool]] = [
                (s, name, rel, update)
                for update in (False, True)
                for name, rel in scoring.items()
                for s in (SELECTIONS if not update else ("aba", "mra"))
            ]
            runs += [("vpa", "-", None, False), ("random", "-", None, False)]
            for method, name, rel, update in runs:
                started = time.perf_counter()
                rebuilt = reconstruct(
                    release,
                    rel,
                    method,
                    seed=seed,
                    vpa_budget=vpa_budget,
                    update=update,  # type: ignore[arg-type]
                )
                attack_s = time.perf_counter() - started
                report = truth.measure(rebuilt)
                rows.append(
                    {
                        **base,
                        "method": method,
                        "scoring": name,
                        "update": update,
                        **{f: getattr(report, f) for f in report.__dataclass_fields__},
                        "publish_s": publish_s,
                        "attack_s": attack_s,
                    }
                )
    return rows


def _series(
    method: str,
    corpus: AttackCorpus,
    private: frozenset[str],
    size: int,
    releases: int,
    seed: int,
) -> tuple[list[Transaction], PublishedRelease, ReleaseLedger, float]:
    """Publish a SeGen series (rep 40%) with ``method``; the last release and its corpus."""
    positions = segen(len(corpus.published), size, releases, 0.4, seed)
    history = SeriesHistory()
    params = PublishParams(seed=seed)
    seconds = 0.0
    for release_positions in positions:
        batch = [corpus.published[i] for i in release_positions]
        started = time.perf_counter()
        publication = publish(method, history, batch, private, params)
        seconds = time.perf_counter() - started
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
    return batch, publication.release, publication.ledger, seconds


def _holds(method: str, private: frozenset[str]) -> Holds:
    """Inv publishes one value per private set (design.md §9); the others publish terms."""
    if method != "inv":
        return holds_term
    from app.core.variants.inv import sensitive_value

    return lambda t, value: sensitive_value(t.terms & private) == value


def anony_style(
    corpus: AttackCorpus,
    scoring: dict[str, Relatedness],
    methods: Sequence[str],
    size: int,
    releases: int,
    seed: int,
) -> list[dict[str, Any]]:
    """Attack the last release of a SeGen series of each method: private-copy share against
    the random reconstruction, and counterfeit-detection AUC by row coherence."""
    vocabulary = sorted({t for record in corpus.published for t in record.terms})
    private = choose_private_terms(vocabulary, 0.1, seed)
    rows: list[dict[str, Any]] = []
    for method in methods:
        try:
            raw, release, ledger, publish_s = _series(method, corpus, private, size, releases, seed)
        except Exception as error:  # a method that fails is reported, not fatal
            rows.append({"corpus": corpus.name, "method": method, "error": repr(error)})
            continue
        sources = row_sources(raw, release, ledger)
        holds = _holds(method, private)
        base = {"corpus": corpus.name, "method": method, "rows": release.n_rows}
        base["counterfeits"] = ledger.counterfeit_rows
        base["publish_s"] = publish_s
        for name, rel in [*((n, r) for n, r in scoring.items()), ("-", None)]:
            for selection in SELECTIONS if rel is not None else ("random",):
                started = time.perf_counter()
                guess = reassociate_private(release, rel, selection, seed=seed)
                attack_s = time.perf_counter() - started
                report = measure_private(raw, sources, guess, release, holds)
                rows.append(
                    {
                        **base,
                        "kind": "private",
                        "selection": selection,
                        "scoring": name,
                        **{f: getattr(report, f) for f in report.__dataclass_fields__},
                        "attack_s": attack_s,
                    }
                )
            if rel is not None and ledger.counterfeit_rows:
                areas = counterfeit_auc(sources, row_coherence(release, rel), release)
                rows.append({**base, "kind": "auc", "scoring": name, **areas})
    return rows


def timing(
    corpus: list[Transaction], size: int, seed: int, method: str = "sanony"
) -> dict[str, Any]:
    """Publication of a ``size``-row release against the attack on it (NGD scoring learnt
    from the rest of the corpus): the attack must not take longer than the publication."""
    published = [Transaction.of(t.terms, f"p{i}") for i, t in enumerate(corpus[:size])]
    background = [sorted(t.terms) for t in corpus[size:]]
    vocabulary = sorted({t for record in published for t in record.terms})
    private = choose_private_terms(vocabulary, 0.1, seed)
    started = time.perf_counter()
    publication = publish(method, SeriesHistory(), published, private, PublishParams(seed=seed))
    publish_s = time.perf_counter() - started
    out: dict[str, Any] = {"rows": publication.release.n_rows, "publish_s": publish_s}
    started = time.perf_counter()
    ngd = CooccurrenceRelatedness(background)
    out["background_s"] = time.perf_counter() - started
    started = time.perf_counter()
    reassociate_private(publication.release, ngd, "aba", seed=seed)
    out["private_s"] = time.perf_counter() - started
    started = time.perf_counter()
    row_coherence(publication.release, ngd)
    out["coherence_s"] = time.perf_counter() - started
    out["attack_s"] = out["private_s"] + out["coherence_s"]
    out["method"] = method
    return out


def spread(
    corpus: AttackCorpus,
    scoring: dict[str, Relatedness],
    k: int,
    m: int,
    seeds: Sequence[int],
) -> list[dict[str, Any]]:
    """Accuracy and k^m breakage of the random baseline and of ABA over several seeds (the
    random slots, and the semantic attacks' tie-breaking), at one ``k``, ``m``: is the gap
    larger than the baseline's own spread?"""
    result = disassociate(corpus.published, DisassociationParams(k=k, m=m))
    release = result.public()
    runs = [("random", "-", None, False)]
    runs += [
        ("aba", name, rel, update) for name, rel in scoring.items() for update in (False, True)
    ]
    truth = GroundTruth(corpus.published, result)
    rows = []
    for method, name, rel, update in runs:
        values = [
            truth.measure(
                reconstruct(release, rel, method, seed=seed, update=update),  # type: ignore[arg-type]
            )
            for seed in seeds
        ]
        row: dict[str, Any] = {"corpus": corpus.name, "k": k, "m": m, "method": method}
        row.update({"scoring": name, "update": update, "seeds": len(seeds)})
        for measure in ("accuracy", "km_breakage"):
            series = np.array([getattr(v, measure) for v in values])
            row[measure] = float(series.mean())
            row[f"{measure}_sd"] = float(series.std(ddof=1)) if len(series) > 1 else 0.0
        rows.append(row)
    return rows

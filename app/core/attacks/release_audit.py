"""The audit a publication job keeps for auditors (design.md §11): background, attack, report.

:func:`~app.core.attacks.audit.audit_release` attacks and measures an Anony-style release,
:func:`~app.core.attacks.chunk_audit.audit_disassociation` a disassociated one (against the
publisher's result, which the job still holds); this module decides what
the attacker knows (:func:`published_background`), how rows are traced to their
transactions (by individual, else :func:`~app.core.attacks.tracing.trace_by_content`) and
what of it is kept (:func:`audit_report`): aggregate measures and run times only, never a
term, a row or an individual, so that the report may be shown to whoever may see the
ledger's totals.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

from app.core.attacks.anony_measures import Holds, holds_term
from app.core.attacks.audit import audit_release
from app.core.attacks.chunk_audit import audit_disassociation, chunk_background
from app.core.attacks.frequency_risk import frequency_audit
from app.core.attacks.mixture_risk import DEFAULT_DRAWS
from app.core.attacks.settings import AuditSettings
from app.core.attacks.tracing import trace_by_content
from app.core.disassociation.model import DisassociatedRelease, Disassociation
from app.core.errors import InvalidCorpus
from app.core.model import PublishedRelease, ReleaseLedger, Transaction
from app.core.progress import ProgressCallback

__all__ = [
    "audit_report",
    "chunk_report",
    "frequency_section",
    "holds_for",
    "published_background",
    "skipped_report",
    "untraceable",
]

#: Methods whose releases are Anony-style (rows plus per-cluster private copies).
ANONY_STYLE = ("sanony", "anony", "wong", "kanony", "scomp", "inv")


def published_background(releases: Sequence[PublishedRelease]) -> list[list[str]]:
    """What any analyst of the series knows of which terms go together: every public row,
    with the private terms its cluster publishes; of a disassociated release, its chunks
    (:func:`~app.core.attacks.chunk_audit.chunk_background`).

    A private term is never on a public row (it is in the cluster's segment), so rows alone
    would teach NGD nothing about private terms. The cluster is the finest place the release
    puts them; an attacker counting, over all clusters, how often a row term shares a cluster
    with a private term learns exactly the association the public data reveals.

    >>> from app.core.model import release_from_counts
    >>> r = release_from_counts(1, [([("a", "b"), ("c",)], {"HIV": 1}, {}, 0)], {}, {})
    >>> published_background([r])
    [['a', 'b', 'HIV'], ['c', 'HIV']]
    """
    background: list[list[str]] = []
    for release in releases:
        if isinstance(release.layout, DisassociatedRelease):
            background.extend(chunk_background([release.layout]))
        for cluster in release.clusters:
            private = sorted(cluster.private_terms())
            background.extend([*row, *private] for row in cluster.rows)
    return background


def untraceable(corpus: Sequence[Transaction]) -> str | None:
    """Why the published rows cannot be traced to their transactions, or ``None``.

    The ledger names each true row's individual, not its corpus position
    (:func:`~app.core.attacks.anony_measures.row_sources`): scoring needs a unique
    individual on every transaction.
    """
    seen: set[str] = set()
    for transaction in corpus:
        if transaction.individual is None:
            return "missing_individuals"
        if transaction.individual in seen:
            return "repeated_individuals"
        seen.add(transaction.individual)
    return None


def holds_for(method: str, private_terms: frozenset[str]) -> Holds:
    """Whether a raw transaction holds a published private value: Inv publishes one value per
    private set (design.md §9), the other methods publish the terms."""
    if method != "inv":
        return holds_term
    from app.core.variants.inv import sensitive_value

    return lambda t, value: sensitive_value(t.terms & private_terms) == value


def skipped_report(reason: str, settings: AuditSettings, background: int) -> dict[str, Any]:
    """The report of an audit that could not run (kept, so auditors see why)."""
    return {
        "status": "skipped",
        "reason": reason,
        "settings": settings.as_dict(),
        "background_transactions": background,
    }


def audit_report(
    corpus: Sequence[Transaction],
    release: PublishedRelease,
    ledger: ReleaseLedger,
    background: Sequence[Sequence[str]],
    settings: AuditSettings,
    *,
    method: str,
    series_seed: int = 0,
    progress: ProgressCallback | None = None,
    disassociation: Disassociation | None = None,
    series: Sequence[PublishedRelease] | None = None,
    series_ledgers: Sequence[ReleaseLedger | None] | None = None,
    r_th: float | None = None,
) -> dict[str, Any]:
    """Attack ``release`` as ``settings`` say and return the report kept for auditors.

    Anony-style releases: ``private_copies`` per attack (``aba-ngd``, ..., ``random``):
    copies placed, how many on a row truly holding the term, the ``share``, the risk model's
    ``prior`` N(s,C*)/N(C*), the ``random_expected`` share and the ``lift`` over it; ``best``
    the semantic attack with the highest share; ``counterfeit_detection`` per scoring the
    AUCs (0.5 = blind; ``null`` where undefined). Disassociated releases (``method``
    ``disassociation``, ground truth ``disassociation``, the publisher's result):
    ``reassociation`` per attack, ``best_reassociation`` and ``disassociation``
    (:func:`chunk_report`). ``seconds`` the run time. Skipped (``status``) when nothing can
    be scored.

    ``frequency`` (Anony-style, when ``series`` is given: the public releases up to and
    including ``release``, which is last): :func:`frequency_section`; ``series_ledgers``
    the ledgers of ``series`` where known (default: ``release``'s only), ``r_th`` the
    threshold of the detector-aware risk (none without it).
    """
    started = time.perf_counter()
    if method == "disassociation":
        return chunk_report(
            corpus,
            release,
            disassociation,
            background,
            settings,
            series_seed=series_seed,
            progress=progress,
        )
    if method not in ANONY_STYLE:
        return skipped_report("method_not_supported", settings, len(background))
    if not background:
        return skipped_report("no_background", settings, 0)
    tracing, ambiguous = "individuals", 0
    if untraceable(corpus) is not None:
        try:
            corpus, ledger, ambiguous = trace_by_content(corpus, release, ledger)
        except InvalidCorpus:
            return skipped_report("untraceable_rows", settings, len(background))
        tracing = "content"
    raw = audit_release(
        corpus,
        release,
        ledger,
        background,
        settings.audit_params(series_seed),
        progress,
        holds_for(method, release.private_terms),
    )
    private: dict[str, dict[str, Any]] = raw["private_copies"]
    semantic = {k: v for k, v in private.items() if k != "random"}
    best = max(semantic, key=lambda k: (semantic[k]["share"], k))
    report: dict[str, Any] = _finite(
        {
            **_done(settings, background, release),
            "tracing": tracing,
            "ambiguous_rows": ambiguous,
            "counterfeit_rows": ledger.counterfeit_rows,
            "private_copies": private,
            "best": {
                "attack": best,
                **semantic[best],
                "lift_over_prior": _ratio(semantic[best]["share"], semantic[best]["prior"]),
            },
            "counterfeit_detection": raw["counterfeit_detection"],
            "seconds": round(time.perf_counter() - started, 4),
        }
    )
    if series is not None:
        ledgers = list(series_ledgers or [None] * len(series))
        ledgers[-1] = ledger  # traced by content, it may have been rebuilt
        report["frequency"] = frequency_section(
            series, ledgers, r_th, series_seed, settings.mixture_draws, progress
        )
        report["seconds"] = round(time.perf_counter() - started, 4)
    return report


def frequency_section(
    series: Sequence[PublishedRelease],
    ledgers: Sequence[ReleaseLedger | None],
    r_th: float | None,
    seed: int = 0,
    draws: int = DEFAULT_DRAWS,
    progress: ProgressCallback | None = None,
) -> dict[str, Any]:
    """The frequency detector's figures for the last release of ``series``:
    ``detection`` its AUCs and top-k precision (``None`` without counterfeits), ``risk`` per
    detector (``blind``, ``detector``; ``control`` and ``perfect`` when every ledger is
    known) its rows over ``r_th`` and maximum serial risk once each cluster's counterfeits
    are discounted (:mod:`~app.core.attacks.frequency_risk`); ``mixture`` per adversary
    (``blind``; ``logistic`` when every ledger is known) the Bayesian adversary's figures
    (:mod:`~app.core.attacks.mixture_risk`). Aggregates only."""
    # The Bayesian adversary scores this release only: one release's assessment per draw.
    full = frequency_audit(
        series, ledgers, r_th, seed, draws, progress, mixture_scored=[len(series) - 1]
    )
    mine = series[-1].release_no
    detection = [d for d in full["detection"] if d["release_no"] == mine]
    return {
        "score": full["score"],
        "detection": detection[0] if detection and detection[0]["counterfeits"] else None,
        "r_th": r_th,
        "risk": {name: risks[-1] for name, risks in full.get("risk", {}).items()},
        "mixture": {name: risks[-1] for name, risks in full.get("mixture", {}).items()},
    }


def chunk_report(
    corpus: Sequence[Transaction],
    release: PublishedRelease,
    truth: Disassociation | None,
    background: Sequence[Sequence[str]],
    settings: AuditSettings,
    *,
    series_seed: int = 0,
    progress: ProgressCallback | None = None,
) -> dict[str, Any]:
    """The kept report of a disassociated release (thesis chapters 4-5).

    ``reassociation`` per attack (``aba-ngd``, ``aba+update-ngd``, ..., ``random``): accuracy
    (formula 5.4 averaged), by kind of chunk, transactions breakage (5.3), k^m-anonymity
    breakage, precision and the counts they are over; ``best_reassociation`` the semantic
    attack with the highest accuracy and its ``lift_over_random``; ``disassociation`` what
    was attacked and its ``tlost``. Skipped without the publisher's result (``truth``: a
    release read back from storage has lost it) or a background.
    """
    started = time.perf_counter()
    if truth is None:
        return skipped_report("no_ground_truth", settings, len(background))
    if not background:
        return skipped_report("no_background", settings, 0)
    raw = audit_disassociation(
        corpus, truth, background, settings.audit_params(series_seed), progress
    )
    attacks: dict[str, dict[str, Any]] = raw["reassociation"]
    semantic = {k: v for k, v in attacks.items() if k != "random"}
    best = max(semantic, key=lambda k: (semantic[k]["accuracy"], k))
    report: dict[str, Any] = _finite(
        {
            **_done(settings, background, release),
            "counterfeit_rows": 0,
            "reassociation": attacks,
            "best_reassociation": {
                "attack": best,
                **semantic[best],
                "lift_over_random": _ratio(
                    semantic[best]["accuracy"], attacks["random"]["accuracy"]
                ),
            },
            "disassociation": {
                **raw["disassociation"],
                "tlost": round(raw["disassociation"]["tlost"], 6),
            },
            "seconds": round(time.perf_counter() - started, 4),
        }
    )
    return report


def _done(
    settings: AuditSettings, background: Sequence[Sequence[str]], release: PublishedRelease
) -> dict[str, Any]:
    """The head every completed report starts with, whatever the method."""
    return {
        "status": "done",
        "reason": None,
        "settings": settings.as_dict(),
        "background_transactions": len(background),
        "rows": release.n_rows,
    }


def _ratio(a: float, b: float) -> float | None:
    return a / b if b else None


def _finite(value: Any) -> Any:
    """NaN and infinities as ``null``: JSON (and PostgreSQL's JSONB) has no NaN."""
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value

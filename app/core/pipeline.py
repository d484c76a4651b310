"""One entry point that publishes a corpus with any method (docs/api.md ``method``)."""

from __future__ import annotations

import gc
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from app.core.distortion import copy_distortion, true_copies
from app.core.errors import WarningCode
from app.core.history import SeriesHistory
from app.core.methods import get_method
from app.core.model import Publication, Transaction
from app.core.params import PublishParams
from app.core.progress import ProgressCallback
from app.core.randomness import draw_secret, randomness_record, seed_warning
from app.core.validation import validate_corpus

__all__ = ["DISCLOSING_RATE", "escalation_warning", "publish", "rate_warnings", "with_secret"]


def publish(
    method: str,
    history: SeriesHistory,
    corpus: Sequence[Transaction],
    private_terms: frozenset[str],
    params: Any,
    progress: ProgressCallback | None = None,
) -> Publication:
    """Validate ``corpus`` and publish it as release ``history.next_release_no``.

    ``method`` names a method of the registry (:mod:`app.core.methods`); ``params`` are its
    effective parameters (its ``parse``). ``private_terms`` is the series' private terms as of this
    release (S_P may grow). The returned :class:`~app.core.model.Publication` holds the public
    release, the private ledger and a report (counterfeits by phase, rounds, timings). Nothing
    in ``history`` is mutated.

    Randomness (:mod:`app.core.randomness`): without a publisher ``seed`` or a ``secret`` (a
    release reproduced from its ledger), a secret is drawn here for this release; the ledger
    records it (``ledger.randomness``) and the report warns of a publisher seed.
    """
    declared = get_method(method)
    validate_corpus(corpus, require_individual=declared.individuals != "ignored")
    params = with_secret(params)
    with _no_cyclic_collection():
        publication = declared.publish(history, corpus, private_terms, params, progress)
    warnings: list[dict[str, str]] = []
    if isinstance(params, PublishParams):
        publication.ledger.randomness = randomness_record(params.seed, params.secret)
        warning = seed_warning(params.seed)
        if warning is not None:
            warnings.append(warning)
    if publication.release.layout is None:
        # In copies, what analysts meet; the counterfeit rate counts rows only.
        publication.report["private_copies"] = copy_distortion(
            true_copies(corpus, private_terms), publication.release
        )
    warnings += rate_warnings(publication.release.population_rates, private_terms)
    escalation = publication.report.get("escalation")
    warning = escalation_warning(escalation)
    if warning is not None:
        warnings.append(warning)
    if isinstance(escalation, Mapping) and escalation.get("suppressed_beyond_budget"):
        publication.release.suppression_beyond_budget = True
    if warnings:
        publication.report["warnings"] = warnings
    return publication


@contextmanager
def _no_cyclic_collection() -> Iterator[None]:
    """The cyclic garbage collector paused while a release is built, as it was after.

    A publication makes millions of small objects (the series state, row patterns, counts)
    that live until it returns and are freed by their reference counts; each of the
    collector's full passes walked them and the whole history again, and their number grows
    with the series: 16% of release 18's CPU on the 20 x 20,000 BMS-WebView-2 series. Nothing
    a publication computes depends on the collector."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


#: A published population rate at or above this share discloses a private term by itself.
DISCLOSING_RATE = 0.5


def rate_warnings(
    rates: Mapping[str, float], private_terms: frozenset[str]
) -> list[dict[str, str]]:
    """Warnings for private terms whose published rate ``ss(s, T^μ)`` is at least
    :data:`DISCLOSING_RATE`.

    The serial risk bounds a row's *lift* over that rate (formula 15), not the rate itself: in
    a one-row snapshot ``{"HIV": 1.0}`` the lift is 1, within every ``r_th``, yet whoever knows
    a person is in the snapshot learns that they have HIV. The publisher is told; the release
    still publishes (the rate is the population's, which the publisher may mean to print).
    """
    return [
        {
            "code": WarningCode.DISCLOSING_POPULATION_RATE,
            "term": s,
            "rate": f"{rate:.4g}",
            "message": f"{rate:.0%} of the release's rows hold {s!r}: whoever knows a person is "
            "in this snapshot learns they have it with that probability, whatever r_th "
            "(r_th bounds the lift over the rate, not the rate). A larger snapshot dilutes it.",
        }
        for s, rate in sorted(rates.items())
        if s in private_terms and rate >= DISCLOSING_RATE
    ]


def escalation_warning(escalation: object) -> dict[str, str] | None:
    """The warning of a release that was published only by escalating (``on_infeasible =
    "escalate"``): coarser clusters or suppression beyond the budget cost utility
    the publisher should know of; ``None`` when the release did not escalate.

    >>> escalation_warning(None) is None
    True
    """
    if not isinstance(escalation, Mapping):
        return None
    steps = escalation.get("steps")
    last = steps[-1] if isinstance(steps, list) and steps else {}
    beyond = escalation.get("suppressed_beyond_budget")
    copies = sum(beyond.values()) if isinstance(beyond, Mapping) else 0
    terms = ", ".join(sorted(beyond)) if isinstance(beyond, Mapping) else ""
    step = last.get("step", "") if isinstance(last, Mapping) else ""
    before, after = escalation.get("clusters_before"), escalation.get("clusters_after")
    what = f"clusters {before} -> {after}"
    if step == "certified_counterfeits":
        what += "; counterfeit rows carrying a private term where published clusters certify it"
    if copies:
        what += f"; {copies} private copies suppressed beyond the budget ({terms})"
    return {
        "code": WarningCode.ESCALATED,
        "step": str(step),
        "message": "the repair and the suppression budget could not bring every row within "
        f"r_th, so the release escalated ({step}: {what}); every row is still within r_th. "
        "Set params.on_infeasible to 'refuse' to refuse such a release instead "
        "(report.escalation).",
    }


def with_secret(params: Any) -> Any:
    """``params`` with a release secret drawn from the CSPRNG, unless the publisher gave a
    ``seed`` or the caller a ``secret`` (reproducing a release from its ledger).

    Drawn here, at the one entry point every caller goes through, so that no path (the
    service, a dry run, ``publish-local``, a library user) publishes with public randomness.
    """
    if isinstance(params, PublishParams) and params.seed is None and not params.secret:
        return replace(params, secret=draw_secret())
    return params

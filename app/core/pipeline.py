"""One entry point that publishes a corpus with any method (API.md ``method``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from app.core.history import SeriesHistory
from app.core.model import Publication, Transaction
from app.core.params import PublishParams
from app.core.progress import ProgressCallback
from app.core.randomness import draw_secret, randomness_record, seed_warning
from app.core.validation import validate_corpus

__all__ = ["publish", "with_secret"]


def publish(
    method: str,
    history: SeriesHistory,
    corpus: Sequence[Transaction],
    private_terms: frozenset[str],
    params: Any,
    progress: ProgressCallback | None = None,
) -> Publication:
    """Validate ``corpus`` and publish it as release ``history.next_release_no``.

    ``method`` names a method of :mod:`app.methods.registry`; ``params`` are its effective
    parameters (its ``parse``). ``private_terms`` is the series' private terms as of this
    release (S_P may grow). The returned :class:`~app.core.model.Publication` holds the public
    release, the private ledger and a report (counterfeits by phase, rounds, timings). Nothing
    in ``history`` is mutated.

    Randomness (:mod:`app.core.randomness`): without a publisher ``seed`` or a ``secret`` (a
    release reproduced from its ledger), a secret is drawn here for this release; the ledger
    records it (``ledger.randomness``) and the report warns of a publisher seed.
    """
    # The registry's declarations import only the core (app.methods): the lookup keeps the
    # core free of I/O, and a method's own module is still loaded only when a series uses it.
    from app.methods.registry import get_method

    declared = get_method(method)
    validate_corpus(corpus, require_individual=declared.individuals != "ignored")
    params = with_secret(params)
    publication = declared.publish(history, corpus, private_terms, params, progress)
    if isinstance(params, PublishParams):
        publication.ledger.randomness = randomness_record(params.seed, params.secret)
        warning = seed_warning(params.seed)
        if warning is not None:
            publication.report["warnings"] = [warning]
    return publication


def with_secret(params: Any) -> Any:
    """``params`` with a release secret drawn from the CSPRNG, unless the publisher gave a
    ``seed`` or the caller a ``secret`` (reproducing a release from its ledger).

    Drawn here, at the one entry point every caller goes through, so that no path (the
    service, a dry run, ``publish-local``, a library user) publishes with public randomness.
    """
    if isinstance(params, PublishParams) and params.seed is None and not params.secret:
        return replace(params, secret=draw_secret())
    return params

"""One entry point that publishes a corpus with any method (API.md ``method``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.core.history import SeriesHistory
from app.core.model import Publication, Transaction
from app.core.progress import ProgressCallback
from app.core.validation import validate_corpus

__all__ = ["publish"]


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
    """
    # The registry's declarations import only the core (app.methods): the lookup keeps the
    # core free of I/O, and a method's own module is still loaded only when a series uses it.
    from app.methods.registry import get_method

    declared = get_method(method)
    validate_corpus(corpus, require_individual=declared.individuals != "ignored")
    return declared.publish(history, corpus, private_terms, params, progress)

"""One entry point that publishes a corpus with any method (API.md ``method``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from app.core.errors import InvalidParameter
from app.core.history import SeriesHistory
from app.core.model import Publication, Transaction
from app.core.params import PublishParams
from app.core.progress import ProgressCallback
from app.core.validation import validate_corpus

__all__ = ["publish", "Publisher"]


class Publisher(Protocol):
    def __call__(
        self,
        history: SeriesHistory,
        corpus: Sequence[Transaction],
        private_terms: frozenset[str],
        params: PublishParams,
        progress: ProgressCallback | None = None,
    ) -> Publication: ...


def _publisher(method: str) -> Publisher:
    # Imported lazily so that a method's module is loaded only when a series uses it.
    if method == "sanony":
        from app.core.perturbation.sanony import publish_sanony

        return publish_sanony
    if method == "anony":
        from app.core.perturbation.sanony import publish_anony

        return publish_anony
    if method == "wong":
        from app.core.variants.wong import publish_wong

        return publish_wong
    if method == "kanony":
        from app.core.variants.kanony import publish_kanony

        return publish_kanony
    if method == "scomp":
        from app.core.variants.scomp import publish_scomp

        return publish_scomp
    if method == "inv":
        from app.core.variants.inv import publish_inv

        return publish_inv
    raise InvalidParameter(f"method: unknown method {method!r}", {"param": "method"})


def publish(
    method: str,
    history: SeriesHistory,
    corpus: Sequence[Transaction],
    private_terms: frozenset[str],
    params: PublishParams,
    progress: ProgressCallback | None = None,
) -> Publication:
    """Validate ``corpus`` and publish it as release ``history.next_release_no``.

    ``private_terms`` is the series' private terms as of this release (S_P may grow). The
    returned :class:`~app.core.model.Publication` holds the public release, the private ledger
    and a report (counterfeits by phase, rounds, timings). Nothing in ``history`` is mutated.
    """
    validate_corpus(corpus, require_individual=method in ("wong", "inv"))
    return _publisher(method)(history, corpus, private_terms, params, progress)

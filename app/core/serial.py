"""Sanony's two guarantees and the pipeline that keeps each (design.md §5.8).

``guarantee: "true_rows"`` (the default) publishes no counterfeit and no count above the true
one (:mod:`app.core.withholding`): every row is true, so the paper's adversary computed from the
public files alone is a complete proof. ``guarantee: "paper"`` is the paper's mechanism (Anony,
BP, FP1, FP2 with counterfeit rows, :mod:`app.core.perturbation.sanony`), whose guarantee holds
only while its counterfeits are not told apart from true rows (docs/attacks.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from app.core.history import SeriesHistory
from app.core.model import Publication, Transaction
from app.core.params import PublishParams
from app.core.perturbation.sanony import publish_sanony
from app.core.progress import ProgressCallback
from app.core.withholding.publish import publish_true_rows

__all__ = ["publish_serial"]


def publish_serial(
    history: SeriesHistory,
    corpus: Sequence[Transaction],
    private_terms: frozenset[str],
    params: PublishParams,
    progress: ProgressCallback | None = None,
) -> Publication:
    """Publish ``corpus`` as the next release of a Sanony series, by its ``guarantee``."""
    if params.guarantee == "paper":
        publication = publish_sanony(history, corpus, private_terms, params, progress)
        publication.report["guarantee"] = "paper"
        return publication
    return publish_true_rows(history, corpus, private_terms, params, progress)

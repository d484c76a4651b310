"""One entry point for auditors: the semantic attack on a release, scored (design.md §11).

A publication job calls :func:`audit_release` while the raw snapshot still exists (ground
truth exists only then) and keeps the report for auditors. No I/O: the caller passes the
corpus, the release, its ledger and the background corpus.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from app.core.attacks.anony import reassociate_private, row_coherence
from app.core.attacks.anony_measures import (
    Holds,
    counterfeit_auc,
    holds_term,
    measure_private,
    row_sources,
)
from app.core.attacks.scoring import CooccurrenceRelatedness, EmbeddingRelatedness, Relatedness
from app.core.attacks.selection import SELECTIONS, Selection
from app.core.errors import InvalidParameter
from app.core.model import PublishedRelease, ReleaseLedger, Transaction
from app.core.progress import Progress, ProgressCallback

__all__ = ["AUDIT_PHASES", "AuditParams", "audit_release", "relatedness_for"]

#: Phases reported through :mod:`app.core.progress`.
AUDIT_PHASES: tuple[str, ...] = ("scoring", "private", "coherence")


@dataclass(frozen=True, slots=True)
class AuditParams:
    """What the audit runs.

    ``selections``: ABA/MRA/RGA; ``embeddings``: also train skip-gram embeddings (seconds per
    background corpus; NGD alone is cheap); ``window``: their context window (cover a whole
    transaction when the background's transactions are sets); ``seed``: every random choice.
    """

    selections: tuple[Selection, ...] = SELECTIONS
    embeddings: bool = False
    window: int = 5
    seed: int = 0

    def __post_init__(self) -> None:
        unknown = set(self.selections) - set(SELECTIONS)
        if unknown or not self.selections:
            raise InvalidParameter(
                f"selections: choose among {', '.join(SELECTIONS)}", {"param": "selections"}
            )
        if self.window < 1:
            raise InvalidParameter("window: must be at least 1", {"param": "window"})


def relatedness_for(
    background: Sequence[Sequence[str]], params: AuditParams
) -> dict[str, Relatedness]:
    """The scoring stage ``params`` ask for, by key suffix: offline NGD (``ngd``, cheap, the
    reference) always, skip-gram embeddings (``we``) when ``params.embeddings``."""
    scorers: dict[str, Relatedness] = {"ngd": CooccurrenceRelatedness(background)}
    if params.embeddings:
        scorers["we"] = EmbeddingRelatedness(background, seed=params.seed, window=params.window)
    return scorers


def audit_release(
    corpus: Sequence[Transaction],
    release: PublishedRelease,
    ledger: ReleaseLedger,
    background: Sequence[Sequence[str]],
    params: AuditParams | None = None,
    progress: ProgressCallback | None = None,
    holds: Holds = holds_term,
) -> dict[str, Any]:
    """Attack ``release`` with relatedness learnt from ``background`` and score the attack.

    Parameters
    ----------
    corpus:
        The raw snapshot published as ``release``, each transaction with a unique individual.
    release, ledger:
        The public release and its private ledger.
    background:
        Transactions (token sequences) the attacker is assumed to know; never the published
        corpus itself.
    params:
        :class:`AuditParams`.
    progress:
        Called with ``(phase, overall fraction)``, phases :data:`AUDIT_PHASES`.
    holds:
        Whether a raw transaction holds a published private value (Inv publishes one value
        per private set: pass a test comparing that value).

    Returns
    -------
    dict
        ``private_copies``: per attack (``aba-ngd``, ..., ``random``), the
        :class:`~app.core.attacks.anony_measures.PrivateReport` as a dict;
        ``counterfeit_detection``: per scoring, the AUCs (absent without counterfeits);
        ``params``.
    """
    params = params or AuditParams()
    report = Progress(progress, AUDIT_PHASES)
    report("scoring")
    sources = row_sources(corpus, release, ledger)
    scorers = relatedness_for(background, params)
    report("private")
    private: dict[str, dict[str, Any]] = {}
    attacks = [(s, n, r) for n, r in scorers.items() for s in params.selections]
    for done, (selection, name, relatedness) in enumerate(attacks):
        guess = reassociate_private(release, relatedness, selection, seed=params.seed)
        private[f"{selection}-{name}"] = asdict(
            measure_private(corpus, sources, guess, release, holds)
        )
        report("private", (done + 1) / (len(attacks) + 1))
    guess = reassociate_private(release, None, "random", seed=params.seed)
    private["random"] = asdict(measure_private(corpus, sources, guess, release, holds))
    report("coherence")
    detection: dict[str, dict[str, float]] = {}
    if ledger.counterfeit_rows:
        for done, (name, relatedness) in enumerate(scorers.items()):
            coherence = row_coherence(release, relatedness)
            detection[name] = counterfeit_auc(sources, coherence, release)
            report("coherence", (done + 1) / len(scorers))
    report("coherence", 1.0)
    return {
        "private_copies": private,
        "counterfeit_detection": detection,
        "params": {**asdict(params), "selections": list(params.selections)},
    }

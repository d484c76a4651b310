"""Measures of the attack on Anony-style releases (design.md §11), against the private ledger.

Ground truth needs each published row's raw transaction. The ledger does not keep corpus
positions; it keeps each true row's individual (``ClusterLedger.individuals``, ``None`` for a
counterfeit), so rows are traced through individuals, which must then be unique in the corpus
(:func:`row_sources`). A ``transaction_index`` field beside ``individuals`` would remove that
requirement.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from app.core.attacks.anony import PrivateGuess
from app.core.errors import InvalidCorpus
from app.core.model import PublishedRelease, ReleaseLedger, Transaction

__all__ = [
    "Holds",
    "PrivateReport",
    "auc",
    "counterfeit_auc",
    "holds_term",
    "measure_private",
    "row_sources",
]

Sources = list[list[int | None]]

#: Whether a raw transaction holds a published private value. Most methods publish private
#: terms (the default test, ``s in terms``); Inv publishes one value per private set.
Holds = Callable[[Transaction, str], bool]


def holds_term(transaction: Transaction, value: str) -> bool:
    """The default :data:`Holds`: the transaction holds the private term."""
    return value in transaction.terms


def row_sources(
    corpus: Sequence[Transaction], release: PublishedRelease, ledger: ReleaseLedger
) -> Sources:
    """Per cluster, per published row: the corpus position of its transaction, ``None`` for a
    counterfeit. Raises :class:`~app.core.errors.InvalidCorpus` when individuals are missing
    or repeat (the rows could not be traced)."""
    index: dict[str, int] = {}
    for i, t in enumerate(corpus):
        if t.individual is None or t.individual in index:
            raise InvalidCorpus(
                "tracing rows to transactions needs a unique individual on every transaction",
                {"transaction": i},
            )
        index[t.individual] = i
    sources: Sources = []
    for cluster, led in zip(release.clusters, ledger.clusters, strict=True):
        if len(led.individuals) != cluster.size:
            raise InvalidCorpus(
                "the ledger lacks the individuals of a cluster", {"cluster": cluster.cluster_id}
            )
        fake = set(led.counterfeit_rows)
        sources.append(
            [
                None if p in fake or key is None else index[key]
                for p, key in enumerate(led.individuals)
            ]
        )
    return sources


@dataclass(frozen=True, slots=True)
class PrivateReport:
    """How many private copies the attack put on a row that truly holds the term.

    ``share`` = ``on_true_row / copies``. ``prior`` is the risk model's random
    reconstruction, ``N(s, C*)/N(C*)`` per copy, averaged over the copies (design.md §4, formula 9);
    ``random_expected`` the exact expectation of random placement, ``h/N(C*)`` per copy with
    ``h`` the rows truly holding ``s`` (they differ where copies went to the global bag,
    counterfeits carry copies, or copies were suppressed). ``lift`` = share / random_expected.
    """

    copies: int
    on_true_row: int
    share: float
    prior: float
    random_expected: float
    lift: float


def measure_private(
    corpus: Sequence[Transaction],
    sources: Sources,
    guess: PrivateGuess,
    release: PublishedRelease,
    holds: Holds = holds_term,
) -> PrivateReport:
    """Score a :class:`~app.core.attacks.anony.PrivateGuess` against the raw transactions;
    ``holds`` says whether a transaction holds a published private value."""
    copies = hits = 0
    prior = expected = 0.0
    for cluster, srcs, chosen in zip(release.clusters, sources, guess.clusters, strict=True):
        for s, rows in chosen.items():
            holders = {p for p, src in enumerate(srcs) if src is not None and holds(corpus[src], s)}
            n = len(rows)
            copies += n
            hits += len(holders.intersection(rows))
            prior += n * cluster.n_s(s) / cluster.size
            expected += n * len(holders) / cluster.size
    share = hits / copies if copies else 0.0
    random_expected = expected / copies if copies else 0.0
    return PrivateReport(
        copies=copies,
        on_true_row=hits,
        share=share,
        prior=prior / copies if copies else 0.0,
        random_expected=random_expected,
        lift=share / random_expected if random_expected else 0.0,
    )


def auc(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """Area under the ROC curve: P(a positive scores above a negative), ties half (the
    Mann-Whitney U statistic over ``n1 * n0``); ``nan`` when a side is empty.

    >>> auc([0.9, 0.8], [0.1, 0.8])
    0.875
    """
    if not len(positives) or not len(negatives):
        return float("nan")
    # Imported here, not with the module: every process that reads a series' settings
    # imports this package, and scipy.stats was a fifth of the service's start.
    from scipy.stats import mannwhitneyu

    u = mannwhitneyu(positives, negatives, alternative="two-sided").statistic
    return float(u) / (len(positives) * len(negatives))


def counterfeit_auc(
    sources: Sources, coherence: Sequence[Sequence[float]], release: PublishedRelease
) -> dict[str, float]:
    """AUC of telling counterfeits from true rows (0.5 = blind), by several detectors.

    - ``all_rows``: low coherence = suspect; rows of one term (undefined coherence) get the
      median coherence, i.e. no evidence. ``multi_term_rows`` scores only rows of two terms or
      more.
    - ``row_size``: fewer terms = suspect (the reference without semantics: Definition 14 read
      literally draws counterfeits at the smallest size that makes a new row).
      ``row_size_either`` lets the adversary pick the direction, ``max(a, 1 - a)``: where
      counterfeits are larger than true rows, "larger = suspect" is the detector.
    - ``size_in_cluster``: the distance of a row's size from the median size of its
      cluster's rows, far = suspect (a counterfeit of the wrong size for its cluster), taken
      in either direction likewise.
    - ``nearest_row``: the largest Jaccard similarity of a row with another, different row of
      its cluster (a counterfeit copied from a template with one term changed is a near
      duplicate), either direction.
    - ``unique_in_cluster``: a row whose set the cluster holds once is suspect. Definition 14
      forbids a counterfeit identical to a row of its cluster, so no sampling of the terms
      can close this one; it is reported, not a target.
    """
    fake = [src is None for srcs in sources for src in srcs]
    values = np.array([v for c in coherence for v in c], dtype=np.float64)
    sizes = np.array([len(row) for c in release.clusters for row in c.rows], dtype=np.float64)
    finite = ~np.isnan(values)
    filled = np.where(finite, values, np.median(values[finite]) if finite.any() else 0.0)
    labels = np.array(fake, dtype=np.bool_)
    off_size: list[float] = []
    nearest: list[float] = []
    unique: list[float] = []
    for cluster in release.clusters:
        median = float(np.median([len(row) for row in cluster.rows])) if cluster.rows else 0.0
        counts: dict[tuple[str, ...], int] = {}
        for row in cluster.rows:
            counts[row] = counts.get(row, 0) + 1
        distinct = [set(row) for row in counts]
        for row in cluster.rows:
            off_size.append(abs(len(row) - median))
            unique.append(1.0 if counts[row] == 1 else 0.0)
            mine = set(row)
            nearest.append(
                max(
                    (len(mine & o) / len(mine | o) for o in distinct if o != mine and mine | o),
                    default=0.0,
                )
            )

    def split(scores: np.ndarray, keep: np.ndarray) -> float:
        return auc(list(scores[keep & labels]), list(scores[keep & ~labels]))

    def either(value: float) -> float:
        return max(value, 1.0 - value) if not np.isnan(value) else value

    everyone = np.ones_like(labels)
    return {
        "all_rows": split(-filled, everyone),
        "multi_term_rows": split(-values, finite),
        "row_size": split(-sizes, everyone),
        "row_size_either": either(split(-sizes, everyone)),
        "size_in_cluster": either(split(np.array(off_size), everyone)),
        "nearest_row": either(split(np.array(nearest), everyone)),
        "unique_in_cluster": split(np.array(unique), everyone),
        "counterfeits": float(labels.sum()),
        "true_rows": float((~labels).sum()),
    }

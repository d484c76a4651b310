"""The running example of the Sanony paper: Table 1's three corpora, Table 4's partition."""

from __future__ import annotations

from app.core.history import SeriesHistory
from app.core.model import Publication, Transaction
from app.core.pipeline import publish
from tests.core.paper_mode import parse_params

PRIVATE = frozenset({"HIV", "cancer", "herpes"})

#: (cluster label of Table 4, terms) per transaction, for releases 1, 2 and 3.
CORPORA: list[list[tuple[str, set[str]]]] = [
    [
        ("g1", {"theft", "arson", "fraud", "HIV"}),  # Laura
        ("g1", {"theft", "arson", "cancer"}),  # Lucy
        ("g2", {"vandal", "arson"}),  # Martin
        ("g2", {"abuse", "arson", "cancer"}),  # Shane
        ("g3", {"DUI", "assault", "HIV", "herpes"}),  # John
        ("g3", {"DUI", "assault"}),  # Stacy
    ],
    [
        ("g1", {"theft", "arson", "cancer"}),
        ("g1", {"theft", "arson", "murder"}),  # Ben
        ("g2", {"vandal", "arson"}),
        ("g2", {"abuse", "arson", "cancer"}),
        ("g2", {"abuse", "arson", "mansl"}),  # Ivy
    ],
    [
        ("g1", {"theft", "arson", "cancer"}),
        ("g1", {"theft", "arson", "murder"}),
        ("g1", {"theft", "arson", "HIV"}),  # Jane
        ("g2", {"abuse", "arson", "mansl"}),
        ("g2", {"abuse", "arson", "mansl", "cancer"}),  # Pam
    ],
]


def corpus(release: int) -> list[Transaction]:
    """Release ``release`` (1-based) with Table 4's partition as cluster labels."""
    return [Transaction.of(terms, cluster=label) for label, terms in CORPORA[release - 1]]


#: Sanony exactly as the paper runs it: Anony to ``r_th``, Lemma 4 on every overlap, FP1, no
#: alignment.
PAPER_MODE = {
    "backward": "every_overlap",
    "forward_perturbation": True,
    "align": False,
    "counterfeits": "fresh",  # Definition 14 as written: no twins of true rows
}


def paper_params(method: str, r_th: float = 2, seed: int = 7) -> dict[str, object]:
    """The worked example's parameters; Sanony and Kanony in the paper's mode (the service's
    defaults differ, docs/methods.md)."""
    raw: dict[str, object] = {"r_th": r_th, "cluster_size": 2, "seed": seed}
    if method in ("sanony", "kanony"):
        raw.update(PAPER_MODE, anony_r_th=r_th)
    return raw


def publish_series(
    method: str, releases: int = 3, r_th: float = 2, seed: int = 7
) -> tuple[SeriesHistory, list[Publication]]:
    """Publish the first ``releases`` corpora in order with ``method``."""
    params = parse_params(method, paper_params(method, r_th, seed))
    history = SeriesHistory()
    publications: list[Publication] = []
    for number in range(1, releases + 1):
        publication = publish(method, history, corpus(number), PRIVATE, params)
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
        publications.append(publication)
    return history, publications

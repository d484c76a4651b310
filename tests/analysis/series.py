"""Serial data with associations an analyst would look for, published by the real pipeline.

A corpus where every private term rides with two public "driver" terms (a row holding a
driver holds the term far more often than others: the strong rules that a release hides),
cut into a series with SeGen (``app.core.segen``, 40% of each snapshot kept in the next),
published release after release as the service publishes it. The raw snapshots come back
with the public documents, so a test can hold every estimate against the truth.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from typing import Any

from app.analysis.reader import Release, parse_release
from app.core.history import SeriesHistory
from app.core.model import Transaction
from app.core.params import parse_params
from app.core.pipeline import publish
from app.core.segen import segen
from app.io.public import release_document
from app.methods.registry import get_method

PUBLIC = [f"p{i:02d}" for i in range(60)]
PRIVATE = [f"s{i}" for i in range(8)]


def corpus(seed: int, size: int = 4000) -> list[list[str]]:
    """``size`` rows of 1 to 6 public terms (popularity falling as 1/rank) and private terms:
    ``s{i}`` with probability 0.6 in a row holding one of its drivers, 0.02 elsewhere."""
    rng = random.Random(f"corpus:{seed}")
    weights = [1 / (rank + 1) for rank in range(len(PUBLIC))]
    drivers = {s: rng.sample(PUBLIC[:30], 2) for s in PRIVATE}
    rows = []
    for _ in range(size):
        public = set(rng.choices(PUBLIC, weights, k=rng.randint(1, 6)))
        private = {
            s for s, d in drivers.items() if rng.random() < (0.6 if public & set(d) else 0.02)
        }
        rows.append(sorted(public | private))
    return rows


@dataclass(frozen=True)
class PublishedSeries:
    """Public documents (``counterfeit_rows`` and every field a release publishes) and the
    raw snapshots they came from."""

    documents: list[dict[str, Any]]
    snapshots: list[list[list[str]]]
    private: frozenset[str]

    def releases(self) -> list[Release]:
        """The documents as an analyst reads them, each told its earlier releases' copies."""
        from app.analysis.reader import _with_history

        return _with_history(parse_release(d) for d in self.documents)


def publish_series(
    seed: int,
    *,
    releases: int = 3,
    size: int = 1200,
    method: str = "sanony",
    params: dict[str, Any] | None = None,
) -> PublishedSeries:
    """A SeGen series of ``corpus(seed)`` published with ``method`` (``r_th`` 8, the
    defaults otherwise, and a publisher seed so that a run repeats)."""
    rows = corpus(seed)
    snapshots = [
        [rows[p] for p in positions]
        for positions in segen(len(rows), size, releases, 0.4, seed=seed)
    ]
    parsed = parse_params(method, {"r_th": 8, "seed": seed, **(params or {})})
    echo = get_method(method).echo(parsed)
    history = SeriesHistory()
    documents = []
    private = frozenset(PRIVATE)
    for snapshot in snapshots:
        records = [Transaction.of(row) for row in snapshot]
        publication = publish(method, history, records, private, parsed)
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
        documents.append(release_document(publication.release, "held-out", method, echo))
    return PublishedSeries(documents, snapshots, private)


def true_pairs(snapshot: list[list[str]], private: frozenset[str]) -> Counter[tuple[str, str]]:
    """Rows holding each (public term, private term) pair."""
    return Counter(
        (p, s) for row in snapshot for s in set(row) & private for p in set(row) - private
    )

"""A release no withholding can make safe is refused, naming what would publish it
(design.md §5.8, "When a term is pinned")."""

from __future__ import annotations

import pytest

from app.core.errors import PublicationFailed
from app.core.history import SeriesHistory
from app.core.model import Transaction
from app.core.params import parse_params
from app.core.pipeline import publish


def _pinned_series() -> tuple[list[list[Transaction]], frozenset[str]]:
    """Release 1: 24 rows of private terms only (the empty public set) and 16 rows of sets no
    other row has, 8 of them holding X. Release 2: the same 24 empty rows and 16 new sets, no
    X. The overlap of the whole releases is the 24 empty rows, which no generalisation can
    take out, and it caps the copies of X there at 0: release 1's 16 other rows carry all 8,
    odds of 8/32 times (40 - 8) / (40 - 8 - 24) = 1, a posterior of 1/2 against a rate of 8/40:
    serial risk 2.5 over r_th = 2 (formulas 12, 13, 15). Without a steady level
    (``level_margin`` 0), so that release 1 publishes all 8: the level would take X in
    with 3, and the fall to none, which no level prevents, would be a smaller one."""
    empty = [Transaction.of(["Y"]) for _ in range(24)]
    first = empty + [
        Transaction.of([f"a{i}", f"b{i}", *(["X"] if i < 8 else [])]) for i in range(16)
    ]
    second = empty + [Transaction.of([f"c{i}", f"d{i}"]) for i in range(16)]
    return [first, second], frozenset({"X", "Y"})


def test_a_pinned_term_is_refused_with_the_term_release_and_smallest_r_th() -> None:
    (first, second), private = _pinned_series()
    params = parse_params(
        "sanony", {"r_th": 2, "cluster_size": 4, "seed": 1, "min_copies": 5, "level_margin": 0}
    )
    history = SeriesHistory()
    publication = publish("sanony", history, first, private, params)
    assert publication.release.term_totals()["X"] == 8
    history.releases.append(publication.release)
    history.ledgers.append(publication.ledger)
    with pytest.raises(PublicationFailed) as refused:
        publish("sanony", history, second, private, params)
    details = refused.value.details
    assert details["terms"] == ["X"]
    assert details["release_no"] == 2
    assert details["smallest_r_th"] == pytest.approx(2.5)
    message = refused.value.message
    assert "'X'" in message and "release 2" in message and "r_th >= 2.5" in message
    assert "nothing was stored" in message


def test_a_higher_r_th_publishes_what_the_refusal_named() -> None:
    (first, second), private = _pinned_series()
    params = parse_params(
        "sanony", {"r_th": 2.5, "cluster_size": 4, "seed": 1, "min_copies": 5, "level_margin": 0}
    )
    history = SeriesHistory()
    for corpus in (first, second):
        publication = publish("sanony", history, corpus, private, params)
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
    assert len(history.releases) == 2

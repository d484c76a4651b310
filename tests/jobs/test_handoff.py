"""The compute child's input in compact form (no database, no child): packed history and
the transactions built from the payload, equal to what the worker built before."""

from __future__ import annotations

import random

import pytest

from app.core.errors import PublicationFailed
from app.core.history import SeriesHistory
from app.core.model import ClusterLedger, ReleaseLedger, Transaction, release_from_counts
from app.core.pipeline import publish
from app.io.compact import CorpusBuilder, Limits
from app.jobs.handoff import (
    HandOff,
    pack_history,
    pack_release,
    prepare,
    unpack_history,
    unpack_release,
)
from app.methods.registry import get_method, method_names
from app.services.payload import decode_corpus, encode_corpus, publication_input


def _history() -> SeriesHistory:
    release = release_from_counts(
        1,
        [([("arson", "theft"), ("arson", "theft"), ("abuse",)], {"HIV": 1}, {}, 1)],
        {"cancer": 1},
        {"HIV": 0.25, "cancer": 0.1},
    )
    release.private_terms = frozenset({"HIV", "cancer"})
    ledger = ReleaseLedger(
        [ClusterLedger([2], 1, 0, 0, ["k1", None, "k3"], {"HIV": 1})], {"cancer": 1}, {"HIV": 1}
    )
    return SeriesHistory([release], [ledger], {"k1": {"HIV": [(3, 1)]}}, {"k1": frozenset({"HIV"})})


def test_history_round_trip() -> None:
    history = _history()
    releases, state = pack_history(history, [None])
    assert unpack_history(releases, state) == history
    # A release packed before is handed over as it is, not packed again.
    assert pack_history(history, [b"packed before"])[0] == [b"packed before"]
    assert unpack_release(pack_release(history.releases[0], history.ledgers[0])) == (
        history.releases[0],
        history.ledgers[0],
    )


def test_equal_rows_are_packed_once() -> None:
    history = _history()
    rows = history.releases[0].clusters[0].rows
    rows[1] = rows[0]  # one tuple twice, as the loaded releases share them
    release, _ = unpack_release(pack_release(history.releases[0], history.ledgers[0]))
    first, second = release.clusters[0].rows[:2]
    assert first == second and first is second


def test_history_must_pair_up() -> None:
    with pytest.raises(ValueError, match="pair up"):
        pack_history(_history(), [])


def test_prepare_builds_what_the_worker_built() -> None:
    builder = CorpusBuilder(b"secret", Limits())
    builder.add(["theft", "hiv", "arson"], {"item": 0}, "p-1")
    builder.add(["theft", "HIV"], {"item": 1}, "p-2")
    payload = encode_corpus(builder.build())
    handoff = HandOff(
        method="sanony",
        params=None,
        payload=payload,
        series_terms=["HIV"],
        extra_terms=["Arson"],
        private_match="casefold",
    )
    expected = publication_input(decode_corpus(payload), ["HIV"], ["Arson"], "casefold")
    assert prepare(handoff) == expected
    assert expected[1] == {"HIV", "Arson"}


def _corpus(release: int) -> list[Transaction]:
    """60 records with individuals, half of them carried over from the release before."""
    rng = random.Random(release)
    rows = []
    for i in range(60):
        terms = set(rng.sample([f"t{k}" for k in range(10)], rng.randint(1, 3)))
        if rng.random() < 0.4:
            terms.add(rng.choice(["HIV", "cancer"]))
        rows.append(Transaction(frozenset(terms), f"p{i + 30 * (release - 1)}"))
    return rows


def _outcome(name: str, history: SeriesHistory, params: object) -> object:
    try:
        publication = publish(name, history, _corpus(3), PRIVATE, params)
    except PublicationFailed as failed:
        return ("refused", failed.message)
    report = {k: v for k, v in publication.report.items() if k != "seconds"}
    return publication.release, publication.ledger, report


PRIVATE = frozenset({"HIV", "cancer"})


@pytest.mark.parametrize("name", method_names())
def test_the_core_reads_no_past_cluster_ledger(name: str) -> None:
    # The compute child drops the past ledgers' per-cluster part (unpack_history,
    # cluster_ledgers=False): every method must publish the same release without it.
    method = get_method(name)
    params = method.parse({"seed": 7} if "seed" in method.parameters else None)
    history = SeriesHistory()
    for release in (1, 2):
        publication = publish(name, history, _corpus(release), PRIVATE, params)
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
    blobs, state = pack_history(history, [None] * len(history.releases))
    full = unpack_history(blobs, state)
    trimmed = unpack_history(blobs, state, cluster_ledgers=False)
    assert all(not ledger.clusters for ledger in trimmed.ledgers)
    # Disassociation publishes chunks, not Anony clusters: its ledgers have none to drop.
    assert any(ledger.clusters for ledger in full.ledgers) or name == "disassociation"
    assert _outcome(name, trimmed, params) == _outcome(name, full, params)

"""The compute child's input in compact form (no database, no child): packed history and
the transactions built from the payload, equal to what the worker built before."""

from __future__ import annotations

import pytest

from app.core.history import SeriesHistory
from app.core.model import ClusterLedger, ReleaseLedger, release_from_counts
from app.io.compact import CorpusBuilder, Limits
from app.jobs.handoff import (
    HandOff,
    pack_history,
    pack_release,
    prepare,
    unpack_history,
    unpack_release,
)
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

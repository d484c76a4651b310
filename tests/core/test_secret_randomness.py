"""The mechanism's randomness is its secret: an attacker who replays every value a
public release prints finds counterfeit rows no better than chance.

Before the fix the rows of a cluster were shuffled with ``random.Random(f"shuffle:{seed}:
{release_no}")``, the release printed ``params.seed`` (0 by default) and ``release_no``, and
the counterfeits were a cluster's last rows before the shuffle: replaying it found every
counterfeit. The attacker below reads only the public JSON (the ledger scores it) and tries
each derivation that public values could feed; a control shows the same attacker finds every
counterfeit once it is given the seed, so the test can fail.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import pytest

from app.core.history import SeriesHistory
from app.core.model import Publication, Transaction
from app.core.pipeline import publish
from app.core.randomness import KeyedRandom
from app.io.ledger import ledger_document
from app.io.public import release_document
from tests.core.paper_mode import parse_params

PRIVATE = frozenset(f"P{i}" for i in range(6))

#: The paper's BP on every overlap: far more counterfeits than the default's least lift
#:, so that the attack below has power; the shuffle is the same in both.
BP_EVERYWHERE = {"backward": "every_overlap"}


def _series(seed: int, releases: int = 6) -> list[list[Transaction]]:
    """Yearly snapshots that keep about two thirds of the last one: counterfeits arise."""
    rng = random.Random(seed)
    terms = [f"t{i}" for i in range(80)]
    weights = [1 / (i + 1) for i in range(80)]

    def transaction() -> frozenset[str]:
        picked = set(rng.choices(terms, weights=weights, k=rng.randint(1, 4)))
        picked |= {p for p in sorted(PRIVATE) if rng.random() < 0.06}
        return frozenset(picked)

    base = [transaction() for _ in range(1500)]
    corpora = []
    for _ in range(releases):
        base = rng.sample(base, 1000) + [transaction() for _ in range(500)]
        corpora.append([Transaction(terms=t) for t in base])
    return corpora


def _publish_all(
    corpora: Sequence[list[Transaction]], raw: dict[str, Any]
) -> list[tuple[dict[str, Any], dict[str, Any], Publication]]:
    """Each release's public JSON (as an analyst downloads it), its ledger JSON, and the
    publication."""
    params = parse_params("sanony", raw)
    history = SeriesHistory()
    out = []
    for corpus in corpora:
        publication = publish("sanony", history, corpus, PRIVATE, params)
        history.releases.append(publication.release)
        history.ledgers.append(publication.ledger)
        public = json.loads(
            json.dumps(release_document(publication.release, "s", "sanony", {"r_th": params.r_th}))
        )
        # The echo the service and publish-local print, seed or not.
        from app.methods.registry import get_method

        public["params"] = get_method("sanony").echo(params)
        ledger = json.loads(json.dumps(ledger_document(publication.release, publication.ledger)))
        out.append((public, ledger, publication))
    return out


#: A replay: (release_no, printed seed or None) -> the stream the attacker shuffles with.
Replay = Callable[[int, int], random.Random]

REPLAYS: dict[str, Replay] = {
    # The derivation before the fix, with the seed the release prints (0, the old default,
    # when it prints none).
    "mt19937 shuffle:{seed}:{release_no}": lambda no, seed: random.Random(f"shuffle:{seed}:{no}"),
    # Today's derivation fed with public values instead of the secret.
    "keyed seed:{seed}:{release_no}": lambda no, seed: KeyedRandom(f"seed:{seed}:{no}", "shuffle"),
    "keyed secret:{release_no}": lambda no, seed: KeyedRandom(f"secret:{no}", "shuffle"),
}


def _attack(
    public: dict[str, Any], ledger: dict[str, Any], rng: random.Random
) -> tuple[int, int, float, float]:
    """Guess each cluster's counterfeits as its last ``counterfeits`` rows before a replayed
    shuffle. Returns (hits, guesses, hits expected by chance, their variance)."""
    hits = guesses = 0
    expected = variance = 0.0
    for cluster, book in zip(public["clusters"], ledger["clusters"], strict=True):
        n = len(cluster["rows"])
        order = list(range(n))
        rng.shuffle(order)
        k = cluster["counterfeits"]
        if not k:
            continue
        truth = set(book["counterfeit_rows"])
        guess = {p for p, i in enumerate(order) if i >= n - k}
        hits += len(guess & truth)
        guesses += k
        # k positions drawn at random hold len(truth)/n counterfeits each on average
        # (hypergeometric mean and variance).
        p = len(truth) / n
        expected += k * p
        variance += k * p * (1 - p) * (n - k) / max(n - 1, 1)
    return hits, guesses, expected, variance


def _printed_seed(public: dict[str, Any]) -> int:
    return int(public["params"].get("seed") or 0)


@pytest.mark.parametrize("series_seed", [1, 2])
def test_replaying_every_public_value_finds_counterfeits_no_better_than_chance(
    series_seed: int,
) -> None:
    releases = _publish_all(_series(series_seed), {"r_th": 3, "cluster_size": 5, **BP_EVERYWHERE})
    for name, replay in REPLAYS.items():
        hits = guesses = 0
        expected = variance = 0.0
        for public, ledger, _ in releases:
            h, g, e, v = _attack(
                public, ledger, replay(public["release_no"], _printed_seed(public))
            )
            hits, guesses = hits + h, guesses + g
            expected, variance = expected + e, variance + v
        assert guesses >= 60, "too few counterfeits for the test to have power"
        # Chance plus five standard deviations: a false alarm about once in 3.5 million.
        bound = expected + 5 * math.sqrt(variance) + 1
        assert hits <= bound, (name, hits, guesses, expected)
        # A perfect replay would hit every guess: the bound is far below that.
        assert bound < 0.6 * guesses


def test_the_attacker_finds_every_counterfeit_once_told_the_seed() -> None:
    """The control: with a publisher seed (tests, benchmarks) the randomness is public to
    whoever learns it, and the same attack then finds them all. The seed is not printed."""
    releases = _publish_all(
        _series(3), {"r_th": 3, "cluster_size": 5, "seed": 918273645, **BP_EVERYWHERE}
    )
    hits = guesses = 0
    for public, ledger, _ in releases:
        assert "seed" not in public["params"]
        assert public["params"]["randomness"] == "publisher_seed"
        leaked = ledger["randomness"]["seed"]
        h, g, _, _ = _attack(
            public, ledger, KeyedRandom(f"seed:{leaked}:{public['release_no']}", "shuffle")
        )
        hits, guesses = hits + h, guesses + g
    assert guesses >= 60
    assert hits == guesses


def test_counterfeit_positions_are_uniform_within_clusters() -> None:
    """Row order: a counterfeit sits at any position of its cluster alike (first row, last
    row, middle: the shuffle is the only thing that places it)."""
    releases = _publish_all(_series(4), {"r_th": 3, "cluster_size": 5, **BP_EVERYWHERE})
    buckets = [0, 0, 0]
    for public, ledger, _ in releases:
        for cluster, book in zip(public["clusters"], ledger["clusters"], strict=True):
            n = len(cluster["rows"])
            for p in book["counterfeit_rows"]:
                buckets[min(3 * p // n, 2)] += 1
    total = sum(buckets)
    assert total >= 60
    # Each third of a cluster's rows holds about a third of the counterfeits.
    for count in buckets:
        assert abs(count - total / 3) <= 5 * math.sqrt(total * (1 / 3) * (2 / 3)) + 2


def test_the_public_release_prints_neither_seed_nor_secret() -> None:
    for seeded in (False, True):
        raw: dict[str, Any] = {"r_th": 3, "cluster_size": 5, **BP_EVERYWHERE}
        if seeded:
            raw["seed"] = 918273645
        for public, ledger, _ in _publish_all(_series(5, releases=2), raw):
            text = json.dumps(public)
            assert '"seed"' not in text
            randomness = ledger["randomness"]
            if seeded:
                assert randomness == {"source": "publisher_seed", "seed": 918273645}
                assert "918273645" not in text
            else:
                assert randomness["source"] == "secret"
                assert len(randomness["secret"]) == 64
                assert randomness["secret"] not in text


def test_each_release_draws_its_own_secret_and_the_ledger_reproduces_it() -> None:
    corpora = _series(6, releases=3)
    first = _publish_all(corpora, {"r_th": 3, "cluster_size": 5, **BP_EVERYWHERE})
    again = _publish_all(corpora, {"r_th": 3, "cluster_size": 5, **BP_EVERYWHERE})
    secrets_drawn = {ledger["randomness"]["secret"] for _, ledger, _ in first + again}
    assert len(secrets_drawn) == 6
    # Two publications of the same snapshots differ in where the counterfeits sit.
    assert [p["clusters"] for p, _, _ in first] != [p["clusters"] for p, _, _ in again]
    # The publisher reproduces the series from the ledgers' secrets.
    params = parse_params("sanony", {"r_th": 3, "cluster_size": 5, **BP_EVERYWHERE})
    history = SeriesHistory()
    for corpus, (public, ledger, _) in zip(corpora, first, strict=True):
        replayed = publish(
            "sanony",
            history,
            corpus,
            PRIVATE,
            replace(params, secret=ledger["randomness"]["secret"]),
        )
        history.releases.append(replayed.release)
        history.ledgers.append(replayed.ledger)
        document = json.loads(
            json.dumps(release_document(replayed.release, "s", "sanony", {"r_th": params.r_th}))
        )
        assert document["clusters"] == public["clusters"]
        assert replayed.ledger.randomness == ledger["randomness"]


def test_a_secret_cannot_be_given_as_a_parameter() -> None:
    from app.core.errors import InvalidParameter

    with pytest.raises(InvalidParameter, match="secret"):
        parse_params("sanony", {"secret": "00" * 32})


def test_keyed_streams_are_uniform_reproducible_and_separate() -> None:
    stream = KeyedRandom("secret:k", "shuffle")
    counts: dict[tuple[int, ...], int] = {}
    for _ in range(30_000):
        order = [0, 1, 2]
        stream.shuffle(order)
        counts[tuple(order)] = counts.get(tuple(order), 0) + 1
    # Pearson's chi-square over the 6 permutations, 5 degrees of freedom: 25.7 is p = 1e-4.
    expected = 30_000 / 6
    assert len(counts) == 6
    assert sum((c - expected) ** 2 / expected for c in counts.values()) < 25.7
    draws = [stream.random() for _ in range(20_000)]
    assert all(0 <= d < 1 for d in draws)
    assert abs(sum(draws) / len(draws) - 0.5) < 0.01
    assert stream.getrandbits(0) == 0 and stream.getrandbits(200) < 2**200
    assert 0 <= stream.randrange(10**30) < 10**30
    again = [KeyedRandom("secret:k", "refine").random() for _ in range(2)]
    assert again[0] == again[1]  # the same key and purpose: the same draws
    assert KeyedRandom("secret:k", "counterfeit").random() != again[0]
    assert KeyedRandom("secret:j", "refine").random() != again[0]
    with pytest.raises(TypeError):
        stream.getstate()

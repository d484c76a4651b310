"""A small world with two topics, for attack tests: terms of one topic go together, and
each topic's private term goes with it."""

from __future__ import annotations

import random

from app.core.model import Transaction

TOPICS = {
    "health": (["cough", "fever", "nurse", "ward", "pill", "rash"], "hiv"),
    "crime": (["arson", "theft", "court", "judge", "fine", "alibi"], "parole"),
}
PRIVATE = frozenset({"hiv", "parole"})


def world(n: int, seed: int, *, individuals: bool = True) -> list[Transaction]:
    """``n`` transactions; each draws 2-4 terms of one topic and, half the time, its private
    term; a few carry one term of the other topic as noise."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        name = rng.choice(sorted(TOPICS))
        terms, private = TOPICS[name]
        chosen = set(rng.sample(terms, rng.randint(2, 4)))
        if rng.random() < 0.5:
            chosen.add(private)
        if rng.random() < 0.1:
            other = TOPICS["crime" if name == "health" else "health"][0]
            chosen.add(rng.choice(other))
        out.append(Transaction.of(chosen, f"p{seed}-{i}" if individuals else None))
    return out


#: Four topics for disassociation: a cluster mixes two, so a record's anchor tells its topic.
MIXED = {
    "crime": ["alibi", "arson", "court", "fine", "fraud", "judge", "parole", "theft"],
    "food": ["bread", "butter", "cheese", "garlic", "olive", "pasta", "sauce", "wine"],
    "health": ["clinic", "cough", "fever", "nurse", "pill", "rash", "viral", "ward"],
    "sport": ["coach", "derby", "goal", "league", "match", "pitch", "referee", "striker"],
}


def mixed_clusters(n: int, seed: int, *, size: int = 10) -> list[Transaction]:
    """``n`` transactions of three terms of one topic, labelled in clusters of ``size`` that
    alternate two topics: the clustering keeps topics apart inside a cluster, which is where
    a semantic attacker can tell records apart (horizontal partitioning alone would make
    clusters of one topic, where semantics tells nothing)."""
    rng = random.Random(seed)
    names = sorted(MIXED)
    out = []
    for i in range(n):
        group = i // size
        topic = names[(2 * group + i % 2) % len(names)]
        out.append(Transaction.of(rng.sample(MIXED[topic], 3), f"m{seed}-{i}", f"g{group}"))
    return out

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

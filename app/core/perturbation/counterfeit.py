"""Counterfeit transactions (Definition 14).

A counterfeit is a new row whose terms are a random sample, of the minimal size (at least one
term), of the cluster's multiset of non-private terms, and which is identical to no row of
the cluster. When the cluster cannot give one, the corpus' non-private terms are sampled, then
the whole series'. Terms are drawn with probability proportional to their count in the
multiset, so counterfeits look like the cluster's rows.

Decision: a counterfeit that no release holds yet is preferred, at the smallest size where
one exists (cluster terms first, then the corpus', then the series'); only when there is
none anywhere is the minimal valid sample taken.
A counterfeit identical to a row of another release would create an overlap of its own, and
on click-stream corpora most single terms are somebody's row, so "minimal" alone would turn
perturbation into a source of new composition attacks.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Iterable, Iterator

from app.core.model import Row
from app.core.risk.state import ClusterState, SeriesState

__all__ = ["CounterfeitFactory"]

_CANDIDATES = 6
_TRIES = 24
_ENUMERATE_FROM = 10


class CounterfeitFactory:
    """Makes counterfeit rows for clusters of the release at position ``release``."""

    def __init__(
        self, state: SeriesState, release: int, corpus_terms: Counter[str], seed: int | str
    ) -> None:
        self._state = state
        self._release = release
        self._rng = random.Random(f"counterfeit:{seed}")
        self._corpus_terms = corpus_terms
        self._series_terms: Counter[str] | None = None
        self._cluster_terms: dict[int, Counter[str]] = {}
        self._cumulative: dict[int, list[int]] = {}

    def make(self, position: int, cluster: ClusterState) -> Row:
        """A counterfeit row for the cluster at ``position`` of the new release."""
        pools = (self._terms_of(position, cluster), self._corpus_terms, self._series())
        return self._pick(pools, cluster, position)

    def make_global(self) -> Row:
        """A counterfeit drawn from the corpus' non-private terms (global composition, BP)."""
        return self._pick((self._corpus_terms, self._series()), None, None)

    def _pick(
        self, pools: tuple[Counter[str], ...], cluster: ClusterState | None, position: int | None
    ) -> Row:
        quiet: Row | None = None
        minimal: Row | None = None
        for pool in pools:
            fresh, local, valid = self._sample(pool, cluster, position)
            if fresh is not None:
                return fresh
            quiet = quiet or local
            minimal = minimal or valid
        # Next best: a set no other cluster of this release holds, so that the release keeps
        # every copy of a set in one cluster (SPEC 5) and the counterfeit links no new pair.
        if quiet is not None:
            return quiet
        if minimal is not None:
            return minimal
        # Every subset of the series' terms is already a row of this cluster (tiny
        # vocabularies). Definition 14 cannot hold; the empty set (a transaction with private
        # terms only) is the next least informative row, else a sampled row is repeated.
        taken = cluster.counts if cluster is not None else {}
        if () not in taken:
            return ()
        return self._rng.choice(sorted(taken))

    def _terms_of(self, position: int, cluster: ClusterState) -> Counter[str]:
        found = self._cluster_terms.get(position)
        if found is None:
            found = Counter(t for row in cluster.rows[: cluster.n_true] for t in row)
            self._cluster_terms[position] = found
        return found

    def _series(self) -> Counter[str]:
        if self._series_terms is None:
            self._series_terms = Counter()
            for release in self._state.releases:
                for row, mult in release.row_counts.items():
                    for term in row:
                        self._series_terms[term] += mult
        return self._series_terms

    def _sample(
        self, pool: Counter[str], cluster: ClusterState | None, position: int | None
    ) -> tuple[Row | None, Row | None, Row | None]:
        """(a valid row no release holds, of the smallest such size; a valid row no other
        cluster of this release holds; the minimal valid row)."""
        if not pool:
            return None, None, None
        terms = sorted(pool)
        minimal: Row | None = None
        local: Row | None = None
        for size in range(1, len(terms) + 1):
            candidates = self._candidates(pool, terms, size, cluster)
            valid = list(itertools.islice(candidates, _CANDIDATES))
            for row in valid:
                holders = self._state.holders(row)
                if not holders:
                    return row, local or row, minimal or row
                if local is None and all(
                    ref == (self._release, position) for ref in holders if ref[0] == self._release
                ):
                    local = row
            if minimal is None and valid:
                minimal = valid[0]
        return None, local, minimal

    def _candidates(
        self, pool: Counter[str], terms: list[str], size: int, cluster: ClusterState | None
    ) -> Iterator[Row]:
        seen: set[Row] = set()
        taken = cluster.counts if cluster is not None else {}
        for row in self._draws(pool, terms, size):
            if row not in seen and row not in taken:
                seen.add(row)
                yield row

    def _draws(self, pool: Counter[str], terms: list[str], size: int) -> Iterable[Row]:
        # Terms drawn with probability proportional to their count, without repeats.
        weights = self._weights(pool, terms)
        for _ in range(_TRIES):
            drawn: set[str] = set()
            for term in self._rng.choices(terms, cum_weights=weights, k=4 * size):
                drawn.add(term)
                if len(drawn) == size:
                    yield tuple(sorted(drawn))
                    break
        if len(terms) <= _ENUMERATE_FROM or size == 1:
            ordered = sorted(terms, key=lambda t: -(self._rng.random() ** (1.0 / pool[t])))
            for combo in itertools.combinations(ordered[: _ENUMERATE_FROM * 2], size):
                yield tuple(sorted(combo))

    def _weights(self, pool: Counter[str], terms: list[str]) -> list[int]:
        key = id(pool)
        cached = self._cumulative.get(key)
        if cached is None or len(cached) != len(terms):
            cached = list(itertools.accumulate(pool[t] for t in terms))
            self._cumulative[key] = cached
        return cached

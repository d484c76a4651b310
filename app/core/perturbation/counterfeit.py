"""Counterfeit transactions (Definition 14).

A counterfeit is a new row whose terms are a random sample of the cluster's multiset of
non-private terms, and which is identical to no row of the cluster. When the cluster cannot
give one, the corpus' non-private terms are sampled, then the whole series'.

Decision: *how* the sample is drawn follows the true rows, so that the
semantic adversary (design.md §11) cannot tell counterfeits from true rows by their size or by how
well their terms go together (``docs/attacks.md``, "Counterfeits that cannot be told apart").

- **Size.** Definition 14 asks for the minimal number of terms. Taken literally it gives rows
  of one term among sentences of eleven (counterfeit-detection AUC by size alone: 0.996 on
  Lee sentences). A counterfeit instead takes the size of a *template*, a true row of its
  cluster drawn at random, so counterfeit sizes follow the cluster's own size distribution.
  The size is drawn once per counterfeit; only when no fresh row of it exists is it raised,
  one term at a time (redrawing at each failure would favour the sizes where fresh rows are
  easy, the larger ones). Fresh rows of one term are enumerated, not sampled.
- **Co-occurrence.** Candidates of the size come from walks on the co-occurrence graph of
  the rows the series shows (the new release's true rows and the published releases' rows:
  public, so nothing leaks): a template completed, or a walk from a term drawn by its count
  in the cluster; each next term with weight ``(ε + Σ_x co(t, x))^3 · ((ε + h(t)) / k)^2``
  (``co``: rows holding ``t`` and the chosen ``x``; ``h``: how many of the ``k`` chosen terms
  ``t`` meets), so a term joins because it goes with the whole row. A candidate the cluster
  or the series already holds gets one term swapped the same way, a few times.
- **Joint distribution.** Of up to ``_KEEP`` fresh candidates, the one whose coherence
  (mean ``1/(1 + NGD)`` of its pairs, formula 4.1 of the thesis on the same counts) is
  nearest the template's is kept: counterfeits are neither less nor more coherent than the
  rows they stand among.
- **Definition 14's order** holds: the cluster's terms first; the corpus terms that meet
  them (weight ``λ``) only when the cluster's give no fresh row; terms that meet none of the
  chosen ones only last; then the minimal search over the cluster's, the corpus' and the
  series' terms as before. Every draw comes from the release's secret ``counterfeit`` stream
  (:mod:`app.core.randomness`) over sorted terms: the same input and key give the same
  counterfeits.

Decision: no counterfeit prints a private term of the release, in any
spelling. The rows of earlier releases (co-occurrence, the series' terms) may hold a term in
clear that became private later (``private_terms`` grow with a release, design.md §1): the factory
sees those rows without it, and without any term that folds onto a private one (NFKC case fold,
:mod:`app.core.spelling`; under ``private_match = "casefold"`` ``hiv`` *is* ``HIV``). The
release's own rows come split and spelled by the current private terms already. Before, a
reviewer counted 13 rows over 15 small series (r_th 2, cluster sizes 1, 2 and 10) that printed
a newly private term, often a counterfeit ``['X']`` drawn from an earlier row (reproduced: 5
rows under Sanony and 5 under Kanony on 15 such series; ``tests/core/test_newly_private.py``).

Decision: a counterfeit is first a *twin*, a true row of its cluster repeated,
when that keeps the release's counterfeits as rare across the series as its true rows, class by
class (:meth:`CounterfeitFactory._twin`, ``counterfeits: blend``, the default); else a fresh
row as below. Fresh rows alone are sets the whole series lacks, which a ranking by set rarity
found with AUC 0.84-0.95 on BMS-WebView-1 and -2.

Decision: a fresh counterfeit that no release holds yet is preferred, larger if need be; only when
there is none anywhere is a row that no other cluster of this release holds taken, then the
minimal valid sample. A counterfeit identical to a row of another release would create an
overlap of its own, and on click-stream corpora most single terms are somebody's row, so
"minimal" alone would turn perturbation into a source of new composition attacks.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
from collections import Counter, OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence

import numpy as np

from app.core.model import Row
from app.core.randomness import mechanism_random
from app.core.risk.state import ClusterState, SeriesState
from app.core.spelling import fold

__all__ = ["CounterfeitFactory"]

_CANDIDATES = 6
_TRIES = 24
_ENUMERATE_FROM = 10
#: Walks per template size before the size is raised by one.
_WALKS = 12
#: How many terms above the template's size a walk may grow to find a fresh row.
_GROW = 3
#: Smoothing of the co-occurrence weight: a cluster term that never meets the chosen terms
#: keeps a small chance, so that a walk in a cluster of unrelated rows still ends.
_EPSILON = 0.05
#: Weight of a corpus term outside the cluster, against a cluster term's count.
_OUTSIDE = 0.25
#: Swaps tried on a walk that gives a row already held, before a new walk.
_MUTATIONS = 4
#: Fresh candidates gathered per phase before the one nearest the template is kept.
_KEEP = 6
#: Exponent on the co-occurrence weight: a walk goes mostly to the terms that meet the row
#: most often, as true rows' terms do (with 1, counterfeit pairs of BMS-WebView-1 were
#: weaker than true ones: coherence AUC 0.62 pooled over seeds; 3 gave 0.57 before the
#: choice among candidates by coherence below, 6 made sentences too coherent).
_SHARP = 3.0
#: Distributions of the next term kept for reuse (each up to a few thousand candidates).
_DISTRIBUTIONS = 256
#: Templates drawn for a twin (:meth:`CounterfeitFactory._twin`) before a fresh row is drawn.
#: Twins drawn per counterfeit (:meth:`CounterfeitFactory._twin`), the fresh row beside them.
_TWIN_DRAWS = 16
#: Upper bounds of the rarity classes of a set's copies across the series (the last class
#: holds the rest): finer classes (powers of two) left fewer twins a class of their own and
#: the greedy match chose fresh rows too often (logistic AUC 0.81-0.84 against 0.66-0.69).
_RARITY_BOUNDS = (1, 3, 15)
#: The rarity class of a fresh row: one copy, no other release holds it.
_FRESH_CLASS = (0, False)
#: (weight of outside terms, terms that meet no chosen one allowed): the search's phases.
_PHASES = ((0.0, False), (_OUTSIDE, False), (_OUTSIDE, True))


class CounterfeitFactory:
    """Makes counterfeit rows for clusters of the release at position ``release``."""

    def __init__(
        self,
        state: SeriesState,
        release: int,
        corpus_terms: Counter[str],
        seed: int | str,
        private_terms: frozenset[str] = frozenset(),
        twins: bool = True,
    ) -> None:
        """``private_terms``: the private terms as of the new release; no counterfeit holds
        one, or a spelling that folds onto one, even where an earlier release's rows do.
        ``twins``: a counterfeit may repeat a true row of its cluster that lies outside every
        overlap (:meth:`_twin`); ``False`` gives Definition 14's fresh rows only."""
        self._state = state
        self._twins = twins
        #: Rarity classes of the true rows, and of the counterfeits made so far (:meth:`_twin`).
        self._target: Counter[tuple[int, bool]] | None = None
        self._rarity_made: Counter[tuple[int, bool]] = Counter()
        self._release = release
        self._private = private_terms
        self._private_folds = {fold(s) for s in private_terms}
        #: Per term met in an earlier release's rows: whether it is (a spelling of) a private
        #: term of the new release. Folded once per distinct term, not per row.
        self._is_private: dict[str, bool] = {}
        self._rng: random.Random = mechanism_random(str(seed), "counterfeit")
        self._corpus_terms = corpus_terms
        self._series_terms: Counter[str] | None = None
        self._cluster_terms: dict[int, Counter[str]] = {}
        self._cumulative: dict[int, list[int]] = {}
        self._rows: list[Row] | None = None
        self._nonempty_rows: list[Row] | None = None
        self._true_sizes: list[int] | None = None
        #: Recent distributions of :meth:`_next_term`, least recently used first.
        self._distributions: OrderedDict[tuple[object, ...], tuple[list[str], list[float]]] = (
            OrderedDict()
        )
        self._rows_by_size: dict[int, list[Row]] | None = None
        self._cooc_rows: list[tuple[Row, int]] | None = None
        self._frequency: Counter[str] = Counter()
        self._single_weights: dict[int, list[tuple[str, float]]] = {}
        self._n_rows = 0
        self._by_term: dict[str, list[int]] = {}
        self._neighbours: dict[str, Counter[str]] = {}
        self._neighbour_ids: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._vocabulary_index: dict[str, int] | None = None
        #: Per pool (by ``id``, with the pool kept): :meth:`_pool_view`.
        self._pool_views: dict[
            int, tuple[Counter[str], tuple[np.ndarray, np.ndarray, dict[str, int], np.ndarray]]
        ] = {}
        #: The co-occurrence rows as arrays (vocabulary, term ids per row, multiplicities):
        #: a popular term meets thousands of rows, counted in numpy rather than in Python.
        self._arrays: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None

    def make(self, position: int, cluster: ClusterState) -> Row:
        """A counterfeit row for the cluster at ``position`` of the new release."""
        pool = self._terms_of(position, cluster)
        templates = [row for row in cluster.rows[: cluster.n_true] if row]
        twin = self._twin(templates, position)
        if twin is not None:
            return twin
        if not templates:  # a cluster of private-only transactions: the corpus' sizes
            templates = self._nonempty_corpus_rows()
        walked = self._walks(templates, pool, cluster, position)
        if walked is not None:
            return walked
        pools = (pool, self._corpus_terms, self._series())
        return self._pick(pools, cluster, position)

    def make_global(self) -> Row:
        """A counterfeit for the global composition (BP): the perturber adds it to its most
        similar cluster, so it is drawn like a counterfeit of a cluster picked in proportion
        to its true rows (a template's cluster), which is then likely where it lands; else
        from the corpus' non-private terms."""
        clusters = self._state.releases[self._release].clusters
        if self._true_sizes is None or len(self._true_sizes) != len(clusters):
            # True rows never change while the release is built (counterfeits and
            # suppression do not touch them): accumulated once, not per counterfeit.
            self._true_sizes = list(itertools.accumulate(c.n_true for c in clusters))
        sizes = self._true_sizes
        if sizes and sizes[-1]:
            position = self._rng.choices(range(len(clusters)), cum_weights=sizes)[0]
            cluster = clusters[position]
            templates = [row for row in cluster.rows[: cluster.n_true] if row]
            twin = self._twin(templates, position)
            if twin is not None:  # the perturber puts it in its template's cluster
                return twin
            pool = self._terms_of(position, cluster)
            # No row of that cluster: the perturber skips clusters that already hold the row.
            walked = self._walks(templates, pool, cluster, position)
            if walked is not None:
                return walked
        return self._pick((self._corpus_terms, self._series()), None, None)

    # -- rows shaped like the true ones -----------------------------------------------------

    def _twin(self, templates: Sequence[Row], position: int) -> Row | None:
        """A true row of the cluster at ``position`` repeated as the counterfeit, or ``None``
        when a fresh row serves the match below better (the caller then draws one).

        Why: a fresh row is a set the whole series lacks, while 68-91% of the true
        rows of BMS-WebView-1 and -2 hold a set that another release holds too, so ranking
        rows by how rare their set is across the series found fresh counterfeits with AUC
        0.84-0.95. Twins of random templates overshoot the other way (their sets are common:
        the same ranking reversed finds them with AUC 0.65-0.8 on BMS-WebView-2). So each
        counterfeit is the candidate (``_TWIN_DRAWS`` twins of random templates, or a fresh
        row) whose *rarity class* (the set's copies across the series, 1, 2-3, 4-15 or more,
        and whether another release holds it) the counterfeits made so far lack most against
        the release's true rows: a release's counterfeits are about as rare, class by class,
        as its true rows.

        Lemma 4 asks of a counterfeit that it raise N(C) and leave N(O) as it is, so that the
        ranges of formula 5 widen as BP needs (formulas 16-18). An overlap is a multiset
        intersection, N(O) = Σ min(m, m*): a twin of a set the cluster already holds at least
        as often as every other release does leaves every N(O) unchanged, the overlaps of
        whole releases (global composition) too, and serves formulas 12-18 as a fresh row
        does. Only such twins are candidates, and never where another cluster of the release
        holds the set (one cluster per set, design.md §5).

        Decision: twins that join an overlap (the cluster holds the set less often than
        another release) were tried as well. The logistic detector fell further (0.66-0.75
        against 0.75-0.86 pooled on BMS-WebView-1 5 x 3,000 seeds 1 and 3 and BMS-WebView-2
        5 x 5,000 seed 1), but they cost counterfeits where series grow long: on a BMS-WebView-2
        series of 12 x 20,000 (seed 1) 1,201 counterfeit rows at release 10 against 786 fresh,
        and release 11 refused; with the twins kept here it publishes every release (1,534
        rows at release 12 against 1,389 fresh).
        """
        if not self._twins or not templates:
            return None
        target, made = self._rarity_target(), self._rarity_made
        total_made = sum(made.values()) + 1
        total_target = sum(target.values()) or 1

        def deficit(kind: tuple[int, bool]) -> float:
            return target[kind] / total_target - made[kind] / total_made

        best: Row | None = None
        best_kind = _FRESH_CLASS
        best_gap = deficit(_FRESH_CLASS)
        for _ in range(_TWIN_DRAWS):
            row = self._rng.choice(templates)
            if not self._keeps_overlaps(row, position):
                continue
            kind = self._rarity(row, extra=1)
            gap = deficit(kind)
            if gap > best_gap:
                best, best_kind, best_gap = row, kind, gap
        made[best_kind] += 1
        return best

    def _rarity(self, row: Row, extra: int = 0) -> tuple[int, bool]:
        """The rarity class of ``row``'s set (``extra`` copies more): its copies across the
        series in the classes of ``_RARITY_BOUNDS`` (1, 2-3, 4-15, more), and whether a
        release other than the new one holds it."""
        copies = extra
        elsewhere = False
        for k, release in enumerate(self._state.releases):
            held = release.row_counts.get(row, 0)
            copies += held
            elsewhere = elsewhere or (held > 0 and k != self._release)
        return bisect.bisect_left(_RARITY_BOUNDS, copies), elsewhere

    def _rarity_target(self) -> Counter[tuple[int, bool]]:
        """The rarity classes of the new release's true rows (counted once per factory)."""
        if self._target is None:
            target: Counter[tuple[int, bool]] = Counter()
            # Per distinct set: at 1M rows most rows repeat a set, and each class costs a
            # look-up per release.
            for row, copies in Counter(self._corpus_rows()).items():
                target[self._rarity(row)] += copies
            self._target = target
        return self._target

    def _alone_in_release(self, row: Row, position: int) -> bool:
        """Whether no cluster of the new release but the one at ``position`` holds ``row``."""
        return all(c == position for k, c in self._state.holders(row) if k == self._release)

    def _keeps_overlaps(self, row: Row, position: int) -> bool:
        """Whether one more ``row`` in the cluster at ``position`` leaves every N(O) as it
        is: no other cluster of the release holds it, and no other release holds it more
        often than the cluster does (N(O) = Σ min(m, m*)), whole releases included."""
        if not self._alone_in_release(row, position):
            return False
        mine = self._state.releases[self._release].clusters[position].counts.get(row, 0)
        return all(
            self._state.releases[k].row_counts.get(row, 0) <= mine
            for k, _ in self._state.holders(row)
            if k != self._release
        )

    def _walks(
        self,
        templates: Sequence[Row],
        pool: Counter[str],
        cluster: ClusterState | None,
        position: int | None,
    ) -> Row | None:
        """A fresh row (no release holds it) of a template's size, or up to ``_GROW`` terms
        larger; ``None`` when the walks find none (the caller falls back to Definition 14's
        minimal search, which also finds the rows that no other cluster holds). A walk that
        gives a row the cluster or the series already holds is mutated, one term swapped for
        one that meets the others, before a new walk is tried."""
        if not templates or not pool:
            return None
        taken = cluster.counts if cluster is not None else {}
        terms = sorted(pool)
        # One size per counterfeit, kept while walks can give a row of it: drawing a new size
        # at each failed walk would favour the sizes where fresh rows are easy (the larger).
        target_row = self._rng.choice(templates)
        drawn = len(target_row)
        if templates is self._nonempty_rows:  # the corpus' rows: grouped by size once
            same = self._corpus_rows_by_size()[drawn]
        else:
            same = [row for row in templates if len(row) == drawn]
        for extra in range(_GROW + 1):
            size = drawn + extra
            if size == 1:
                single = self._single(pool, taken)
                if single is not None:
                    return single
                continue
            # The joint distribution of size and co-occurrence: the fresh candidate whose
            # coherence (as the publisher's own co-occurrence scores it) is nearest the drawn
            # template's is kept, so counterfeits are neither less nor more coherent than the
            # rows they stand among. Sharpening the walk alone made sentences too coherent.
            target = self._coherence(target_row) if extra == 0 else float("nan")
            # The cluster's terms first (Definition 14); the corpus terms that meet them only
            # when the cluster's give no fresh row of the size (its "if impossible" order).
            # Each next term must meet a chosen one; only the last phase lets a term that
            # meets none in (a row of unrelated terms is what the coherence detector finds).
            for outside, smooth in _PHASES:
                found: list[Row] = []
                for attempt in range(_WALKS):
                    # Half the attempts complete a template of the size, half walk from scratch.
                    if attempt % 2 == 0:
                        start = self._rng.choice(same)
                        row: Row | None = self._grow(start, pool, size, outside, smooth)
                    else:
                        row = self._walk(pool, terms, size, outside, smooth)
                    for _ in range(_MUTATIONS + 1):
                        if row is None or len(row) < size:
                            break
                        if row not in taken and row not in found and not self._state.holders(row):
                            found.append(row)
                            break
                        row = self._mutate(row, pool, outside, smooth)
                    if len(found) >= _KEEP:
                        break
                if found:
                    if math.isnan(target):
                        return found[0]
                    return min(found, key=lambda r: abs(self._coherence(r) - target))
            # Decision: a row only other releases hold, at the drawn size, is *not* taken
            # before a larger fresh one. It matched sizes better (size AUC 0.55 against 0.62
            # on BMS-WebView-1) but every such row links a cluster of another release, and a
            # B1 5% series then failed its fifth release (28 rows over r_th after 20 repair
            # rounds). Rows at risk come first; the fallback below finds the local rows.
        return None

    def _grow(
        self,
        template: Row,
        pool: Counter[str],
        size: int,
        outside: float,
        smooth: bool,
    ) -> Row:
        """``template`` completed to ``size`` terms as a walk would go on from it."""
        chosen = list(template)
        while len(chosen) < size:
            term = self._next_term(pool, set(chosen), chosen, outside, smooth)
            if term is None:
                break
            chosen.append(term)
        return tuple(sorted(chosen))

    def _walk(
        self, pool: Counter[str], terms: list[str], size: int, outside: float, smooth: bool
    ) -> Row:
        """``size`` terms: the first by its count in ``pool``, each next one as
        :meth:`_next_term` draws it."""
        first = self._rng.choices(terms, cum_weights=self._weights(pool, terms))[0]
        return self._grow((first,), pool, size, outside, smooth)

    def _mutate(self, row: Row, pool: Counter[str], outside: float, smooth: bool) -> Row | None:
        """``row`` with one term (at random) swapped for one drawn as the walk draws, given
        the others (given the term itself for a row of one term: a term that meets it)."""
        drop = self._rng.randrange(len(row))
        kept = [t for i, t in enumerate(row) if i != drop]
        term = self._next_term(pool, set(row), kept or list(row), outside, smooth)
        return None if term is None else tuple(sorted([*kept, term]))

    def _next_term(
        self,
        pool: Counter[str],
        exclude: set[str],
        basis: list[str],
        outside: float,
        smooth: bool,
    ) -> str | None:
        """One more term, none of ``exclude``, drawn with weight
        ``w(t) · (ε + Σ_x co(t, x))^3 · ((ε + h(t)) / k)²`` over the pool's terms and the
        corpus terms met: ``w`` = 1 in the pool, ``λ`` outside, the sum and ``h(t)`` (how many
        of them ``t`` meets) over the ``k`` terms of ``basis``. The last factor asks a term to
        go with *all* the row's terms, as a true row's do (its coherence is a mean over every
        pair), not with one. Sums are looked up per candidate, not accumulated in counters:
        popular terms meet thousands of others."""
        # The same draw recurs (walks completing one template, mutations of one row): a third
        # of the calls at 1M rows. The distribution is kept, not the term, so the random
        # stream and every counterfeit stay as they were.
        key = (id(pool), tuple(basis), frozenset(exclude), outside, smooth)
        distribution = self._distributions.get(key)
        if distribution is None:
            distribution = self._distribution(pool, exclude, basis, outside, smooth)
            self._distributions[key] = distribution
            if len(self._distributions) > _DISTRIBUTIONS:
                self._distributions.popitem(last=False)
        else:
            self._distributions.move_to_end(key)
        chosen, cumulative = distribution
        if not chosen:
            return None
        return self._rng.choices(chosen, cum_weights=cumulative)[0]

    def _distribution(
        self,
        pool: Counter[str],
        exclude: set[str],
        basis: list[str],
        outside: float,
        smooth: bool,
    ) -> tuple[list[str], list[float]]:
        """The candidates of :meth:`_next_term` and their cumulative weights (what
        ``random.choices`` accumulates from the weights): the pool's terms but ``exclude``
        in sorted order, then (``outside``) the corpus terms that meet ``basis``, outside the
        pool and ``exclude``, in sorted order; without ``smooth`` only those that meet one.

        Counted over the co-occurrence vocabulary in numpy (a fifth of release 20's time of
        the 20-release series went here, per candidate in Python): Σ_x co(t, x) and h(t) are
        exact integers however they are summed, each distinct power is taken by Python's own
        ``**`` as before, the product is the same three floats left to right, and a cumulative
        sum adds in order as ``itertools.accumulate`` does, so every weight, and the random
        stream, is the same float as before (``tests/core/perturbation/test_counterfeit_draws.py``
        checks it against the formula written per term)."""
        vocabulary, index = self._vocabulary()
        terms, ids, places, in_pool = self._pool_view(pool)
        size = len(vocabulary)
        # One slot past the vocabulary for the pool's terms no earlier row holds (id -1):
        # nothing is ever added there, so they meet nothing.
        sums = np.zeros(size + 1, dtype=np.int64)
        hits = np.zeros(size + 1, dtype=np.int64)
        for x in basis:
            met, counts = self._neighbour_arrays(x)
            sums[met] += counts
            hits[met] += 1
        left = np.ones(len(terms), dtype=bool)
        for t in exclude:
            at = places.get(t)
            if at is not None:
                left[at] = False
        chosen_ids = ids[left]
        chosen_terms = terms[left]
        factor = np.ones(len(chosen_ids))
        if outside:
            met_outside = hits[:size] > 0
            met_outside &= ~in_pool
            for t in exclude:
                at = index.get(t)
                if at is not None:
                    met_outside[at] = False
            extra = np.flatnonzero(met_outside)  # the vocabulary is sorted: so are these
            chosen_ids = np.concatenate([chosen_ids, extra])
            chosen_terms = np.concatenate([chosen_terms, vocabulary[extra]])
            factor = np.concatenate([factor, np.full(len(extra), outside)])
        if not smooth:
            meets = hits[chosen_ids] > 0
            chosen_ids, chosen_terms, factor = chosen_ids[meets], chosen_terms[meets], factor[meets]
        k = float(len(basis))
        distinct_sums, sum_at = np.unique(sums[chosen_ids], return_inverse=True)
        distinct_hits, hit_at = np.unique(hits[chosen_ids], return_inverse=True)
        powered = np.array([(_EPSILON + total) ** _SHARP for total in distinct_sums.tolist()])
        shares = np.array([((_EPSILON + h) / k) ** 2 for h in distinct_hits.tolist()])
        weights = factor * powered[sum_at] * shares[hit_at]
        return chosen_terms.tolist(), np.cumsum(weights).tolist()

    def _vocabulary(self) -> tuple[np.ndarray, dict[str, int]]:
        """The co-occurrence vocabulary (sorted) and each term's position in it."""
        if self._vocabulary_index is None:
            vocabulary = self._cooccurrence_arrays()[0]
            self._vocabulary_index = {t: i for i, t in enumerate(vocabulary.tolist())}
        return self._cooccurrence_arrays()[0], self._vocabulary_index

    def _pool_view(
        self, pool: Counter[str]
    ) -> tuple[np.ndarray, np.ndarray, dict[str, int], np.ndarray]:
        """(the pool's terms sorted, their ids in the vocabulary or -1, each term's position
        among them, which vocabulary terms the pool holds), once per pool. Pools are never
        changed once made; the pool itself is kept beside its view, so its ``id`` is not
        reused while the view is."""
        found = self._pool_views.get(id(pool))
        if found is not None and found[0] is pool:
            return found[1]
        vocabulary, index = self._vocabulary()
        terms = sorted(pool)
        ids = np.array([index.get(t, -1) for t in terms], dtype=np.int64)
        in_pool = np.zeros(len(vocabulary), dtype=bool)
        in_pool[ids[ids >= 0]] = True
        view = (
            np.array(terms, dtype=object),
            ids,
            {t: i for i, t in enumerate(terms)},
            in_pool,
        )
        self._pool_views[id(pool)] = (pool, view)
        return view

    def _single(self, pool: Counter[str], taken: Mapping[Row, int]) -> Row | None:
        """A fresh row of one term: the pool's terms in a random order weighted by their
        counts, then the corpus terms that meet them, weighted by ``λ`` times how often (a
        term seen beside the cluster's, never alone). Enumerated, not sampled: on click
        streams most single terms are somebody's row, and a few draws would miss the rest.
        Every term met is a candidate: limiting this and the walks to the 64 terms that meet
        each term most was tried for speed, and B1's size AUC rose from 0.51 to 0.58."""
        keyed = self._single_weights.get(id(pool))
        if keyed is None:  # the same for every counterfeit of the cluster: computed once
            weights: dict[str, float] = {t: float(n) for t, n in pool.items() if n}
            met: Counter[str] = Counter()
            for t in weights:
                met.update(self._neighbours_of(t))
            for t, n in met.items():
                if t not in weights:
                    weights[t] = _OUTSIDE * n / len(pool)
            keyed = sorted(weights.items())
            self._single_weights[id(pool)] = keyed
        # Efraimidis-Spirakis: sorting by u^(1/w) gives a weighted random order.
        order = sorted(keyed, key=lambda item: -(self._rng.random() ** (1.0 / item[1])))
        inside = [t for t, _ in order if t in pool]
        for term in inside + [t for t, _ in order if t not in pool]:
            row = (term,)
            if row not in taken and not self._state.holders(row):
                return row
        return None

    def _corpus_rows(self) -> list[Row]:
        """The true rows of the new release (the templates of global counterfeits)."""
        if self._rows is None:
            self._rows = [
                row
                for cluster in self._state.releases[self._release].clusters
                for row in cluster.rows[: cluster.n_true]
            ]
        return self._rows

    def _nonempty_corpus_rows(self) -> list[Row]:
        """:meth:`_corpus_rows` without the empty rows, built once: at 1M rows, filtering
        them anew for every counterfeit of a private-only cluster took 29 of 136 s."""
        if self._nonempty_rows is None:
            self._nonempty_rows = [row for row in self._corpus_rows() if row]
        return self._nonempty_rows

    def _corpus_rows_by_size(self) -> dict[int, list[Row]]:
        """:meth:`_nonempty_corpus_rows` by size, each in its order."""
        if self._rows_by_size is None:
            self._rows_by_size = {}
            for row in self._nonempty_corpus_rows():
                self._rows_by_size.setdefault(len(row), []).append(row)
        return self._rows_by_size

    def _cooccurrence_rows(self) -> list[tuple[Row, int]]:
        """Rows the co-occurrence is counted on, with multiplicities: the new release's true
        rows and every row of the releases already published (public: nothing leaks that
        the series does not show, and more rows give a less noisy co-occurrence)."""
        if self._cooc_rows is None:
            counted: Counter[Row] = Counter(self._corpus_rows())
            for i, release in enumerate(self._state.releases):
                if i != self._release:
                    counted.update(self._in_clear(release.row_counts))
            self._cooc_rows = sorted(counted.items())
            for i, (row, mult) in enumerate(self._cooc_rows):
                self._n_rows += mult
                for term in row:
                    self._by_term.setdefault(term, []).append(i)
                    self._frequency[term] += mult
        return self._cooc_rows

    def _coherence(self, row: Row) -> float:
        """Mean ``1 / (1 + NGD)`` over the pairs of ``row`` (thesis formula 4.1 with the
        co-occurrence rows' counts, as the semantic attack scores a row's coherence from its
        background); ``nan`` for fewer than two terms."""
        if len(row) < 2:
            return float("nan")
        self._cooccurrence_rows()
        f, n = self._frequency, float(max(self._n_rows, 1))
        total = 0.0
        pairs = 0
        for i, x in enumerate(row):
            meets = self._neighbours_of(x)
            for y in row[i + 1 :]:
                pairs += 1
                both = meets.get(y, 0)
                if both <= 0 or not f[x] or not f[y]:
                    continue
                lx, ly = math.log(f[x]), math.log(f[y])
                denominator = math.log(n) - min(lx, ly)
                distance = (max(lx, ly) - math.log(both)) / denominator if denominator > 0 else 0.0
                total += 1.0 / (1.0 + max(distance, 0.0))
        return total / pairs

    def _neighbours_of(self, term: str) -> Counter[str]:
        """``co(t, term)`` for every ``t``: rows holding both (see :meth:`_cooccurrence_rows`)."""
        found = self._neighbours.get(term)
        if found is None:
            met, counts = self._neighbour_arrays(term)
            vocabulary = self._cooccurrence_arrays()[0]
            found = Counter(dict(zip(vocabulary[met].tolist(), counts.tolist(), strict=True)))
            self._neighbours[term] = found
        return found

    def _neighbour_arrays(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_neighbours_of` as arrays: the vocabulary ids of the terms ``term`` meets
        (ascending) and how often it meets each."""
        found = self._neighbour_ids.get(term)
        if found is None:
            vocabulary, ids, starts, mults = self._cooccurrence_arrays()
            holding = self._by_term.get(term, ())
            if holding:
                at = np.asarray(holding, dtype=np.int64)
                lengths = starts[at + 1] - starts[at]
                # Positions of every term of every row holding ``term``, then one weighted
                # count per term (the row's multiplicity each time it appears).
                offsets = np.repeat(starts[at] - np.cumsum(lengths) + lengths, lengths)
                members = ids[offsets + np.arange(int(lengths.sum()))]
                counts = np.bincount(
                    members, weights=np.repeat(mults[at], lengths), minlength=len(vocabulary)
                )
                counts[np.searchsorted(vocabulary, term)] = 0
                nonzero = np.flatnonzero(counts)
                found = (nonzero, counts[nonzero].astype(np.int64))
            else:
                found = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
            self._neighbour_ids[term] = found
        return found

    def _cooccurrence_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(sorted vocabulary, term ids of the rows laid end to end, each row's start, each
        row's multiplicity) of :meth:`_cooccurrence_rows`."""
        if self._arrays is None:
            rows = self._cooccurrence_rows()
            vocabulary = np.array(sorted(self._frequency), dtype=object)
            index = {t: i for i, t in enumerate(vocabulary.tolist())}
            ids = np.fromiter((index[t] for row, _ in rows for t in row), dtype=np.int64)
            starts = np.zeros(len(rows) + 1, dtype=np.int64)
            np.cumsum([len(row) for row, _ in rows], out=starts[1:])
            mults = np.fromiter((m for _, m in rows), dtype=np.float64, count=len(rows))
            self._arrays = (vocabulary, ids, starts, mults)
        return self._arrays

    # -- Definition 14's minimal sample (the fallback) ---------------------------------------

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
        # every copy of a set in one cluster (design.md §5) and the counterfeit links no new pair.
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
        # A row of this cluster that no other cluster of the release holds, when there is one.
        alone = [
            r for r in sorted(taken) if position is None or self._alone_in_release(r, position)
        ]
        return self._rng.choice(alone or sorted(taken))

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
                for row, mult in self._in_clear(release.row_counts).items():
                    for term in row:
                        self._series_terms[term] += mult
        return self._series_terms

    def _in_clear(self, rows: Counter[Row]) -> Counter[Row]:
        """``rows`` (a release's row counts) without the new release's private terms and
        their spellings: what a counterfeit may copy. The same object when no row holds one,
        so a series whose private terms never grew draws exactly as before."""
        if not self._private:
            return rows
        flags = self._is_private
        held = False
        for row in rows:
            for term in row:
                flag = flags.get(term)
                if flag is None:
                    flag = flags[term] = term in self._private or fold(term) in self._private_folds
                held = held or flag
        if not held:
            return rows
        kept: Counter[Row] = Counter()
        for row, mult in rows.items():
            kept[tuple(t for t in row if not flags[t])] += mult
        return kept

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

"""The last lever of the global composition: rows of the new release that no longer match
an earlier release (design.md §5.8; section 2.3.2, formulas 5, 6, 13, 14).

When a term's true count in the new release has fallen so far under an earlier release's that
the earlier release's rows outside their overlap would exceed ``r_th`` whatever count the new
release publishes (it may only publish fewer copies than it holds), one input is left that the
new release controls: the overlap ``N(O)`` itself. The earlier rows are lifted by about
``(N - k) / (N - k - N(O))`` (formula 13 with the range capped at the new count), so fewer rows
in common lower the lift. A row of the new release whose set an earlier release holds is
*generalised to the empty set* (its public terms suppressed, its private terms kept): the
overlap with that release loses it (once the new release has as many empty rows as the earlier
one). The least number of such rows is found by bisection on the global composition alone
(the clusters do not enter it), cheapest rows first (fewest public terms), and only when it
exists is the release built again with them. What it costs is reported per term, as
de-linking's is (``public_terms_suppressed``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from app.core.model import PublishedRelease, Row
from app.core.risk.composition import GlobalComposition
from app.core.risk.state import ClusterState, ReleaseState, SeriesState

__all__ = ["decouple"]


def decouple(
    published: Sequence[PublishedRelease],
    rows: Sequence[Row],
    true_totals: Mapping[str, int],
    terms: Sequence[str],
    r_th: float,
) -> list[int] | None:
    """Positions of rows of the new release (``rows``) to generalise to the empty set so that
    each of ``terms`` has a count at most its true one that puts no row of any release over
    ``r_th`` through the global composition; ``None`` when generalising every candidate does
    not. Candidates are rows whose set an earlier release holds at least as often, fewest
    public terms first."""
    trial = _Trial(published, rows, true_totals, terms, r_th)
    # The trial's whole releases count their rows already: no pass of its own over every
    # published row.
    held: dict[Row, int] = {}
    for release in trial.state.releases[: trial.j]:
        for row, k in release.row_counts.items():
            if k > held.get(row, 0):
                held[row] = k
    mine = trial.state.releases[trial.j].row_counts
    # Decided and ordered once per distinct row (a million rows hold tens of thousands of
    # sets), each set's positions ascending: the order of (public terms, set, position).
    at: dict[Row, list[int]] = {row: [] for row, k in mine.items() if row and k <= held.get(row, 0)}
    for i, row in enumerate(rows):
        found = at.get(row)
        if found is not None:
            found.append(i)
    candidates = [i for row in sorted(at, key=lambda r: (len(r), r)) for i in at[row]]

    def safe(count: int) -> bool:
        return trial.safe(candidates, count)

    if not candidates or not safe(len(candidates)):
        return None
    low, high = 0, len(candidates)
    while high - low > 1:
        middle = (low + high) // 2
        if safe(middle):
            high = middle
        else:
            low = middle
    return sorted(candidates[:high])


class _Trial:
    """The series with the new release as one whole cluster (its clustering does not enter
    the global composition), built once per search: a trial empties the first ``count``
    candidates in place (:meth:`SeriesState.set_rows`), and the composition takes in only the
    rows that moved since the last trial (:meth:`GlobalComposition.refresh`), as it does for
    the placement's moves. Building the series and every release's patterns again per trial
    read every published row once per bisection step: 20 of release 19's 25 CPU seconds on
    the 20 x 20,000 series."""

    def __init__(
        self,
        published: Sequence[PublishedRelease],
        rows: Sequence[Row],
        true_totals: Mapping[str, int],
        terms: Sequence[str],
        r_th: float,
    ) -> None:
        self.state = SeriesState(_whole(release) for release in published)
        self.rows = rows
        n = len(rows)
        totals = Counter({s: k for s, k in true_totals.items() if k})
        whole = ClusterState("c1", list(rows), Counter(), {}, n_true=n)
        release = ReleaseState(len(published) + 1, [whole], totals, {})
        # N(T*) and the totals do not move between trials (a row emptied stays a row), nor
        # does the rate.
        release.rates = {s: k / n for s, k in totals.items()} if n else {}
        self.j = self.state.append(release)
        self.composition = GlobalComposition(self.state, self.j, r_th * (1 + 1e-9))
        self.true_totals = true_totals
        self.terms = terms
        #: How many of the candidates are emptied now.
        self.emptied = 0

    def safe(self, candidates: Sequence[int], count: int) -> bool:
        """Whether every term has a safe count at most its true one with the first ``count``
        of ``candidates`` emptied."""
        ref = (self.j, 0)
        self.state.set_rows(ref, [(i, ()) for i in candidates[self.emptied : count]])
        self.state.set_rows(ref, [(i, self.rows[i]) for i in candidates[count : self.emptied]])
        self.emptied = count
        self.composition.refresh()
        return all(
            self.composition.most_total(s, self.true_totals.get(s, 0)) is not None
            for s in self.terms
        )


def _whole(release: PublishedRelease) -> ReleaseState:
    """A published release as the global composition reads it: one cluster of all its rows
    holding its copies, with the release's row counts, totals, ``N`` and rates (section 2.3.2
    reads each whole release as one cluster, and nothing of its clusters). A state per
    published cluster was a fifth of a trial's time and memory at release 19 of the
    20 x 20,000 series."""
    rows = [row for cluster in release.clusters for row in cluster.rows]
    private: Counter[str] = Counter()
    for cluster in release.clusters:
        private.update({s: k for s, k in cluster.private_counts.items() if k})
    whole = ClusterState("whole", rows, private, {}, n_true=len(rows))
    return ReleaseState(
        release.release_no,
        [whole],
        Counter({s: k for s, k in release.global_bag.items() if k}),
        dict(release.population_rates),
    )

"""The ``true_rows`` publication: Anony, totals, placement, the checked post-condition
(design.md §5.8).

The pipeline keeps Sanony's shape with nothing added to the data:

1. **Anony** on lineage clusters (design.md §5.6) with headroom (``anony_r_th``);
2. **totals** (the backward step at the level of whole releases): each private term's
   published count is the largest at most its true count that puts no row of any release over
   ``r_th`` through the global composition (:mod:`~app.core.withholding.totals`), the excess
   suppressed;
3. **placement** (backward and forward at the level of clusters): true copies moved between
   cluster segments and the global bag until no row is over through a cluster's composition
   (:mod:`~app.core.withholding.placement`);
4. the **post-condition**: every row of every release judged by design.md §4's adversary; the
   placement returns only when none is over.

When the placement is stuck at a clustering, the release is built again with every 2, 4, 8 ...
neighbouring clusters joined, up to one cluster (:func:`~app.core.perturbation.sanony.coarsen`),
and the first that publishes is kept. When a term's count fell so far under an earlier one
that no count the release holds is safe, no clustering helps (the global composition reads the
whole release) and the publication is refused, naming the term, the releases and the smallest
``r_th`` that would publish it.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Iterable, Sequence

from app.core.anonymisation.anony import anonymise
from app.core.errors import PublicationFailed
from app.core.history import SeriesHistory
from app.core.model import Publication, Row, Transaction
from app.core.params import PublishParams
from app.core.perturbation.sanony import coarsen, finalise, release_state, split_rows
from app.core.progress import Progress, ProgressCallback
from app.core.risk.incremental import SeriesRisk
from app.core.risk.state import ReleaseState, SeriesState
from app.core.withholding.clustering import holding_and_copy_free
from app.core.withholding.copies import Copies
from app.core.withholding.decoupling import decouple
from app.core.withholding.delinking import Delinked, delink
from app.core.withholding.placement import Placement, Stuck
from app.core.withholding.totals import levels, settle_totals, worst_rows

__all__ = ["publish_true_rows"]


class _Pinned(Exception):
    """Terms whose rows no count of the new release keeps within ``r_th``."""

    def __init__(
        self,
        worst: dict[str, float],
        pinned: dict[str, int],
        rows: list[Row],
        true_totals: dict[str, int],
    ) -> None:
        super().__init__(", ".join(sorted(pinned)))
        self.worst = worst
        self.pinned = pinned
        #: The new release's rows as built (generalised), and its true totals, for the
        #: decoupling's search (:func:`~app.core.withholding.decoupling.decouple`).
        self.rows = rows
        self.true_totals = true_totals


def publish_true_rows(
    history: SeriesHistory,
    corpus: Sequence[Transaction],
    private_terms: frozenset[str],
    params: PublishParams,
    progress: ProgressCallback | None = None,
) -> Publication:
    """Publish ``corpus`` as the next release with no counterfeit and no count above the true
    one, every row of the series within ``r_th`` (design.md §5.8)."""
    report = Progress(progress)
    steps: list[dict[str, object]] = []
    merge, clusters = 1, None
    emptied: list[int] = []
    #: Seconds of the decoupling's search, reported beside the phases of the build that
    #: published (each build reports its own).
    decoupling = 0.0
    # Each transaction's row and private set, computed once per distinct transaction and
    # shared by equal ones, for every build: a frozenset and a tuple per transaction were
    # 280 MB a million rows, most of a first release's peak. Part of the anony phase, as
    # when each build split the corpus.
    report("anony")
    split = _delinked(split_rows(corpus, private_terms), history)
    while True:
        try:
            publication = _build(
                history, corpus, split, private_terms, params, report, merge, emptied
            )
        except _Pinned as pinned:
            # The traceback holds the failed build's frames, and with them its series state
            # and global composition, as large again as the decoupling's own: let them go.
            pinned.__traceback__ = None
            found = None
            if not emptied:
                report("bp")
                started = time.perf_counter()
                found = decouple(
                    history.releases,
                    pinned.rows,
                    pinned.true_totals,
                    sorted(pinned.pinned),
                    params.r_th,
                )
                decoupling += time.perf_counter() - started
            budget = int(params.max_generalised * len(corpus))
            if not found or len(found) > budget:
                needed = None if not found else len(found) / max(len(corpus), 1)
                raise _refusal(
                    history.next_release_no, params.r_th, pinned, steps, needed
                ) from None
            steps.append(
                {
                    "step": "decoupling",
                    "terms": sorted(pinned.pinned),
                    "worst_serial_risk": round(max(pinned.worst.values(), default=0.0), 4),
                    "rows_generalised": len(found),
                }
            )
            emptied = found
            continue
        except Stuck as stuck:
            steps.append(_stuck_step(merge, stuck))
            clusters = clusters or stuck.clusters
            if merge >= clusters:
                raise _stuck_refusal(history.next_release_no, params.r_th, stuck, steps) from None
            merge *= 2
            continue
        if decoupling:
            publication.report["seconds"]["decoupling"] = round(decoupling, 4)  # type: ignore[index]
        if steps:
            last = {"step": "coarser_clusters", "merge": merge} if merge > 1 else steps.pop()
            publication.report["escalation"] = {
                "steps": [*steps, {**last, "published": True}],
                "clusters_before": clusters or publication.report.get("clusters"),
                "clusters_after": publication.report.get("clusters"),
            }
        return publication


def _build(
    history: SeriesHistory,
    corpus: Sequence[Transaction],
    split: _Split,
    private_terms: frozenset[str],
    params: PublishParams,
    report: Progress,
    merge: int,
    emptied: Sequence[int] = (),
) -> Publication:
    release_no = history.next_release_no
    seed = params.randomness_key(release_no)
    seconds: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(phase: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        seconds[phase] = round(now - clock, 4)
        clock = now

    report("anony")
    rows, private_sets, groups, generalised = split
    delinked = Delinked()
    delinked.terms.update(generalised.terms)
    delinked.rows = generalised.rows
    if emptied:
        rows = list(rows)
        for i in emptied:
            delinked.terms.update(rows[i])
            delinked.rows += 1
            rows[i] = ()
        groups = _positions(rows)
    partition, holding = holding_and_copy_free(
        rows, groups, [[c.rows for c in r.clusters] for r in history.releases], params.cluster_size
    )
    if merge > 1:
        partition, holding = _coarsen(partition, holding, rows, merge)
    threshold = params.anony_threshold
    result = anonymise(rows, private_sets, partition, threshold, seed)
    state = SeriesState.from_published(history.releases)
    j = state.append(release_state(result, release_no))
    release = state.releases[j]
    copies = Copies(release, [_private_counts(private_sets, m) for m in partition], threshold)
    true_totals = {s: copies.total(s) for s in copies.terms()}
    copy_free = sum(copies.empty_cluster(c) for c, held in enumerate(holding) if not held)
    copies.settle()
    _follow_totals(release)
    risk = SeriesRisk(state, j, params.r_th)
    lap("anony")

    report("bp")
    entered = levels(r.term_totals() for r in history.releases)
    settled = settle_totals(
        risk,
        true_totals,
        entered,
        entered,
        params.admission,
        params.reserve,
        params.steady_margin,
        _overlap_share(groups, len(rows), history),
    )
    for s, total in settled.totals.items():
        if total < true_totals.get(s, 0):
            copies.suppress(s, true_totals[s] - total)
    copies.settle()
    _follow_totals(release)
    if settled.pinned:
        raise _Pinned(worst_rows(risk, sorted(settled.pinned)), settled.pinned, rows, true_totals)
    lap("bp")

    report("fp2")
    placement = Placement(state, j, copies, risk, holding)
    try:
        rounds = placement.run(params.max_repair_rounds, lambda f: report("fp2", f))
    except Stuck as stuck:
        stuck.clusters = len(partition)
        raise
    lap("fp2")

    report("verify")
    # The placement returns only once the series, judged whole, has no row over r_th.
    lap("verify")
    published, ledger = finalise(release, corpus, partition, seed, private_terms)
    suppressed = copies.suppressed_total()
    ledger.suppressed = dict(sorted(suppressed.items()))
    for c, taken in enumerate(copies.suppressed):
        if taken:
            ledger.clusters[c].suppressed = dict(sorted(taken.items()))
    in_clusters = sum(sum(c.private_counts.values()) for c in release.clusters)
    in_bag = sum(release.global_bag.values())
    return Publication(
        published,
        ledger,
        {
            "method": "sanony",
            "guarantee": "true_rows",
            "clusters": len(partition),
            "rows": published.n_rows,
            "true_rows": len(corpus),
            "counterfeits": 0,
            "private_copies": {
                "true": sum(true_totals.values()),
                "in_clusters": in_clusters,
                "in_bag": in_bag,
                "suppressed": sum(suppressed.values()),
            },
            "suppressed": dict(sorted(suppressed.items())),
            "not_admitted": dict(sorted(settled.not_admitted.items())),
            "copy_free_to_bag": copy_free,
            "holding_clusters": sum(holding),
            "public_terms_suppressed": sum(delinked.terms.values()),
            "rows_generalised": delinked.rows,
            "placement": {"rounds": rounds, **dict(sorted(placement.moves.items()))},
            "seconds": seconds,
        },
    )


#: The new release's rows (generalised where a published holding cluster has their set),
#: private sets, the positions of each distinct row, and what generalisation suppressed.
_Split = tuple[list[Row], list[frozenset[str]], dict[Row, list[int]], Delinked]


def _delinked(
    split: tuple[list[Row], list[frozenset[str]], dict[Row, list[int]]], history: SeriesHistory
) -> _Split:
    """``split`` with its rows generalised (:func:`~app.core.withholding.delinking.delink`),
    once for every build: the same rows whatever the clustering. Its positions are gathered
    again where a row changed, and the split's dropped (a list of ints per row, twice)."""
    rows, private_sets, groups = split
    rows, delinked = delink(rows, history.releases)
    if delinked.rows:
        groups = _positions(rows)
    return rows, private_sets, groups, delinked


def _overlap_share(groups: dict[Row, list[int]], n: int, history: SeriesHistory) -> float:
    """``N(O)/N`` expected between the new release and the next one (the steady level,
    :func:`~app.core.withholding.totals.entry_level`): the share of the new release's rows
    whose set another of its rows has (a later release drawn from the same population holds
    those sets again), or, when larger, the share its overlap with the latest release holds
    (what the population has shown)."""
    if not n:
        return 1.0
    repeated = sum(len(p) for p in groups.values() if len(p) > 1)
    shown = 0
    if history.releases:
        before = history.releases[-1].row_counts()
        shown = sum(min(len(p), before[row]) for row, p in groups.items() if row in before)
    return max(repeated, shown) / n


def _positions(rows: Sequence[Row]) -> dict[Row, list[int]]:
    """The positions of each distinct row, ascending, rows in order of first appearance."""
    groups: dict[Row, list[int]] = {}
    for i, row in enumerate(rows):
        groups.setdefault(row, []).append(i)
    return groups


def _private_counts(private_sets: Sequence[frozenset[str]], members: Iterable[int]) -> Counter[str]:
    """Copies of each private term the rows at ``members`` hold, terms in the order the rows
    first hold them: counted per distinct private set (shared by equal rows, ``split_rows``)
    rather than per copy."""
    counts: Counter[str] = Counter()
    for held, k in Counter(map(private_sets.__getitem__, members)).items():
        for s in held:
            counts[s] += k
    return counts


def _coarsen(
    partition: list[list[int]], holding: list[bool], rows: Sequence[Row], merge: int
) -> tuple[list[list[int]], list[bool]]:
    """Every ``merge`` neighbouring clusters of each kind joined (escalation)."""
    kinds = [
        coarsen([p for p, h in zip(partition, holding, strict=True) if h == kind], rows, merge)
        for kind in (False, True)
    ]
    return kinds[0] + kinds[1], [False] * len(kinds[0]) + [True] * len(kinds[1])


def _follow_totals(release: ReleaseState) -> None:
    """``ss(s, T*)``: the published copies over the published rows. Suppressed copies leave
    the rate as they leave the counts (no published figure says more than the counts do)."""
    n = release.n
    release.rates = {s: k / n for s, k in sorted(release.totals().items())} if n else {}


def _stuck_step(merge: int, stuck: Stuck) -> dict[str, object]:
    return {
        "step": "coarser_clusters" if merge > 1 else "placement",
        "merge": merge,
        "published": False,
        "rows_over_threshold": len(stuck.violations),
        "terms": sorted({v[2] for v in stuck.violations}),
    }


def _refusal(
    release_no: int,
    r_th: float,
    pinned: _Pinned,
    steps: list[dict[str, object]],
    generalised: float | None,
) -> PublicationFailed:
    """``generalised``: the share of the release's rows decoupling would generalise to publish
    it, when more than ``max_generalised`` (``None``: no decoupling publishes it)."""
    worst = max(pinned.worst.values(), default=r_th)
    terms = sorted(pinned.pinned)
    budget = (
        ""
        if generalised is None
        else f", or max_generalised >= {math.ceil(generalised * 1000) / 1000:g}"
    )
    return PublicationFailed(
        f"release {release_no} cannot be published without counterfeits at r_th = {r_th:g}: "
        f"the count of {', '.join(repr(s) for s in terms)} fell so far below an earlier "
        "release's that the earlier release's rows outside the overlap would exceed r_th "
        f"whatever this release publishes (worst serial risk {worst:.4g}); nothing was stored; "
        f"r_th >= {worst:.4g}{budget} would publish it",
        {
            "terms": terms,
            "release_no": release_no,
            "smallest_r_th": round(worst, 4),
            "max_generalised_needed": None if generalised is None else round(generalised, 4),
            "worst_by_term": {s: round(v, 4) for s, v in sorted(pinned.worst.items())},
            "compositions": {"global": len(terms)},
            "escalation": {"steps": steps},
        },
    )


def _stuck_refusal(
    release_no: int, r_th: float, stuck: Stuck, steps: list[dict[str, object]]
) -> PublicationFailed:
    worst = max((v[3] for v in stuck.violations), default=r_th)
    terms = sorted({v[2] for v in stuck.violations})
    return PublicationFailed(
        f"release {release_no} cannot be published without counterfeits at r_th = {r_th:g}: "
        f"{len(stuck.violations)} rows stay over r_th for {', '.join(repr(s) for s in terms)} "
        "at every clustering down to one cluster (worst serial risk "
        f"{worst:.4g}); nothing was stored; r_th >= {worst:.4g} would publish it",
        {
            "terms": terms,
            "release_no": release_no,
            "smallest_r_th": round(worst, 4),
            "rows_over_threshold": len(stuck.violations),
            "escalation": {"steps": steps},
        },
    )

"""Sanony: Anony, then BP, FP1, FP2 and a checked post-condition (design.md §5; Algorithm 1).

The post-condition (Theorem 1) is checked, not assumed: after FP2 the serial risk of every row
of every release is computed against the whole series including the new release. Rows still
over ``r_th`` (rounding of ``J_s``, global composition, counterfeits that overlap) are repaired
by more counterfeits in the new release, round after round, up to ``max_repair_rounds``;
past that the publication fails with a report and nothing is returned to store.
"""

from __future__ import annotations

import time
from array import array
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import partial

from app.core.anonymisation.anony import AnonyResult, anonymise
from app.core.anonymisation.clustering import partition as partition_corpus
from app.core.anonymisation.lineage import lineage_clusters, lineage_components, whole_set_runs
from app.core.errors import PublicationFailed
from app.core.history import SeriesHistory
from app.core.model import (
    ClusterLedger,
    Publication,
    PublishedCluster,
    PublishedRelease,
    ReleaseLedger,
    Row,
    Transaction,
    make_row,
)
from app.core.params import PublishParams
from app.core.perturbation.alignment import align_release, one_set_to_bag
from app.core.perturbation.counterfeit import CounterfeitFactory
from app.core.perturbation.perturber import Perturber
from app.core.perturbation.repair import Certified, ExplainKept, Repairer
from app.core.progress import Progress, ProgressCallback
from app.core.randomness import mechanism_random
from app.core.risk.incremental import Violation
from app.core.risk.state import ClusterState, ReleaseState, SeriesState

__all__ = [
    "ESCALATE_PHASE",
    "BeforeRates",
    "Judge",
    "anonymise_corpus",
    "finalise",
    "publish_anony",
    "publish_sanony",
    "release_state",
    "split_rows",
    "suppression_history",
]

#: The rows over ``r_th`` anywhere in the series as the new release stands, judged with the
#: population rates its copies imply now (those that will be published if nothing else is
#: added before they are fixed): what the checked post-condition would find.
Judge = Callable[[], list[Violation]]

#: An extra step on the new release after FP1, before its population rates are fixed (Kanony's
#: global-bag invariance). It may add copies to the release, judging their effect with the
#: :data:`Judge`; it returns entries for the report.
BeforeRates = Callable[[ReleaseState, Judge], Mapping[str, object]]


def anonymise_corpus(
    corpus: Sequence[Transaction],
    private_terms: frozenset[str],
    params: PublishParams,
    release_no: int,
    published: Sequence[PublishedRelease] | None = None,
    merge: int = 1,
) -> tuple[AnonyResult, list[array[int]]]:
    """Clustering (or the client's partition) and Anony for one corpus (design.md §2).

    With ``published`` (Sanony, Kanony) the clustering keeps every copy of a set in one cluster
    and continues the published lineages (:mod:`app.core.anonymisation.lineage`, design.md §5);
    without it (the Anony baseline) it is design.md §2.1's frequency-ordered runs. ``merge`` > 1
    joins that many neighbouring clusters into one (:func:`coarsen`, the escalation's first
    step).
    """
    rows, private_sets, groups = split_rows(corpus, private_terms)
    if published is None or (corpus and corpus[0].cluster is not None):
        partition = partition_corpus(corpus, rows, params.cluster_size)
    elif not published:
        partition = whole_set_runs(rows, params.cluster_size, groups)
    else:
        # Each distinct set once per cluster: repeats join nothing more (a million-row history
        # repeats its sets about 13 times in the benchmark).
        lineage_of = lineage_components(
            [list(dict.fromkeys(c.rows)) for c in r.clusters] for r in published
        )
        partition = lineage_clusters(rows, lineage_of, params.cluster_size, groups)
    if merge > 1:
        partition = coarsen(partition, rows, merge)
    # Sanony/Kanony (``published`` given) sanitise with headroom; the Anony baseline to r_th.
    threshold = params.r_th if published is None else params.anony_threshold
    result = anonymise(rows, private_sets, partition, threshold, params.randomness_key(release_no))
    # The partition lives to the end (finalise reads it): as arrays of C longs, 8 bytes a
    # position, where a list of ints held 36 (360 MB at 10,000,000 rows).
    return result, [array("l", members) for members in partition]


def coarsen(partition: Sequence[Sequence[int]], rows: Sequence[Row], merge: int) -> list[list[int]]:
    """``partition`` with every ``merge`` neighbouring clusters joined into one; ``merge`` at
    least the number of clusters gives one cluster for the whole release.

    Neighbours in the frequency-rank order of their most frequent set (the order the
    clustering cuts fresh runs in, :mod:`app.core.anonymisation.lineage`): clusters of similar
    sets are joined first. Each new cluster is a union of whole clusters, so every copy of a
    set stays in one cluster and a lineage is never cut.

    >>> coarsen([[0], [1], [2]], [("a",), ("b",), ("a", "b")], 2)
    [[0, 2], [1]]
    """
    frequency: Counter[str] = Counter(t for row in rows for t in row)
    rank = {
        t: i for i, (t, _) in enumerate(sorted(frequency.items(), key=lambda kv: (-kv[1], kv[0])))
    }

    def key(cluster: Sequence[int]) -> tuple[tuple[int, ...], int]:
        return min((tuple(sorted(rank[t] for t in rows[i])), i) for i in cluster)

    ordered = sorted((c for c in partition if c), key=key)
    step = max(merge, 1)
    return [
        [i for c in ordered[start : start + step] for i in c]
        for start in range(0, len(ordered), step)
    ]


def split_rows(
    corpus: Sequence[Transaction], private_terms: frozenset[str]
) -> tuple[list[Row], list[frozenset[str]], dict[Row, list[int]]]:
    """Each transaction's non-private row and private set, computed once per distinct
    transaction (equal ones share the result): corpora repeat rows, and at a million rows
    splitting each anew took 9 s. Also the positions of each distinct row, ascending, rows in
    order of first appearance (what the clustering groups by): gathered in the same pass, where
    a pass of its own hashed every row again (2.1 s at 2,000,000 rows)."""
    rows: list[Row] = []
    private_sets: list[frozenset[str]] = []
    groups: dict[Row, list[int]] = {}
    split: dict[frozenset[str], tuple[Row, frozenset[str], list[int]]] = {}
    # Equal private sets are one object too: distinct transactions mostly hold few private
    # terms or none, and an empty frozenset each was 216 bytes a row (a million distinct
    # lines of 10 terms: 22 bytes a term of the compute child's peak).
    shared: dict[frozenset[str], frozenset[str]] = {}
    for i, t in enumerate(corpus):
        found = split.get(t.terms)
        if found is None:
            row = make_row(t.terms - private_terms)
            held = frozenset(t.terms & private_terms)
            found = split[t.terms] = (
                row,
                shared.setdefault(held, held),
                groups.setdefault(row, []),
            )
        rows.append(found[0])
        private_sets.append(found[1])
        found[2].append(i)
    return rows, private_sets, groups


def release_state(result: AnonyResult, release_no: int) -> ReleaseState:
    """The new release as a :class:`ReleaseState`: Anony's clusters, no counterfeit yet."""
    clusters = [
        ClusterState(
            cluster_id=f"c{i + 1}",
            rows=list(c.rows),
            private_counts=Counter(c.private_counts),
            global_share=dict(c.global_share),
            n_true=len(c.rows),
        )
        for i, c in enumerate(result.clusters)
    ]
    return ReleaseState(release_no, clusters, Counter(result.global_bag), dict(result.rates))


def population_rates(release: ReleaseState) -> dict[str, float]:
    """``ss(s, T^μ)``: all copies of s over all rows, counterfeits included (3.2.1)."""
    n = release.n
    return {s: k / n for s, k in sorted(release.totals().items())}


def finalise(
    release: ReleaseState,
    corpus: Sequence[Transaction],
    partition: Sequence[Sequence[int]],
    seed: str,
    private_terms: frozenset[str],
    cluster_counts: bool = True,
    release_total: bool = True,
) -> tuple[PublishedRelease, ReleaseLedger]:
    """Shuffle each cluster's rows (counterfeits become indistinguishable) and split the
    public release from the private ledger. ``cluster_counts``: each cluster publishes its BP
    + FP1 rows (``counterfeit_counts`` ``cluster`` or ``paper``), else 0 and the release's
    total alone counts them; ``release_total``: the release publishes that total (not under
    ``paper``, where FP2's and the repair's rows are in no public figure). The ledger keeps
    the split either way."""
    rng = mechanism_random(seed, "shuffle")
    clusters: list[PublishedCluster] = []
    ledgers: list[ClusterLedger] = []
    for cluster, members in zip(release.clusters, partition, strict=True):
        order = list(range(cluster.n))
        rng.shuffle(order)
        individuals = [corpus[i].individual for i in members] + [None] * (
            cluster.n - cluster.n_true
        )
        clusters.append(
            PublishedCluster(
                cluster_id=cluster.cluster_id,
                rows=[cluster.rows[i] for i in order],
                private_counts=dict(sorted((s, k) for s, k in cluster.private_counts.items() if k)),
                global_share=dict(sorted((s, k) for s, k in cluster.global_share.items() if k)),
                # BP + FP1's rows (design.md §3). FP2's and the repair's are s̄-counterfeits put
                # where rows were over r_th: counted per cluster, they tell an adversary how
                # many rows of exactly those clusters to discount (the Bayesian adversary of the
                # counts: 31-114 rows over r_th per release, 3-28 with BP + FP1's).
                # Every counterfeit is counted in the release's total (counterfeit_rows), but
                # under counterfeit_counts "paper"; under "release" the clusters publish none
                # (docs/methods.md, "Counterfeit counts").
                counterfeits=cluster.bp + cluster.fp1 if cluster_counts else 0,
            )
        )
        ledgers.append(
            ClusterLedger(
                counterfeit_rows=sorted(p for p, i in enumerate(order) if i >= cluster.n_true),
                bp=cluster.bp,
                fp1=cluster.fp1,
                fp2=cluster.fp2,
                individuals=[individuals[i] for i in order],
            )
        )
    published = PublishedRelease(
        release_no=release.release_no,
        clusters=clusters,
        global_bag=dict(sorted((s, k) for s, k in release.global_bag.items() if k)),
        population_rates=dict(release.rates),
        private_terms=private_terms,
        counterfeit_rows=sum(c.n - c.n_true for c in release.clusters) if release_total else None,
    )
    return published, ReleaseLedger(clusters=ledgers)


#: Rounds of FP1's recheck and the repair after it; each round's FP1 only widens ranges that
#: the previous repair narrowed, and in practice one round adds nothing.
_RECHECKS = 4


def _recheck_forward(
    perturber: Perturber,
    repairer: Repairer,
    max_rounds: int,
    progress: Callable[[float], None],
) -> tuple[int, int, int]:
    """FP1's test (Lemma 5, formula 19) again, now that each cluster publishes *all* its
    counterfeits, FP2's and the repair's included (every counterfeit row is counted
    in a public figure).

    The paper publishes BP + FP1's counts and hides FP2's, so an analyst who subtracts the
    published counts still over-counts. Publishing every row instead tells the adversary of
    Lemma 5 a larger ``x_d``; FP1 is the step that makes the derived cluster safe for the
    ``x_d`` the adversary reads, so it is run again with the full count, then the checked
    post-condition, until neither adds anything. s̄-counterfeits (FP2's) keep Lemma 3's test
    as it was (``N - x_d`` and ``r2f`` are unchanged, ``r1d`` falls with ``f1``); only the
    repair's s-counterfeits can need more. Returns (FP1 rows, repair rounds, repair rows).
    """
    fp1 = rounds = repaired = 0
    for _ in range(_RECHECKS):
        added = perturber.forward()
        if not added:
            break
        fp1 += added
        more_rounds, more = repairer.run(max_rounds, progress)
        rounds += more_rounds
        repaired += more
    return fp1, rounds, repaired


def suppression_history(history: SeriesHistory) -> tuple[int, int]:
    """The private copies of the published releases and the copies they suppressed, for a
    suppression budget over the series (``suppression_scope = "series"``).

    A release's private copies are those it publishes (cluster segments and global bag) plus
    those it suppressed, less Kanony's global-bag counterfeits; s-counterfeit copies of BP
    and the repair are not told apart in the ledger and count (a few per thousand copies).
    """
    copies = used = 0
    for position, release in enumerate(history.releases):
        copies += sum(release.global_bag.values())
        copies += sum(sum(c.private_counts.values()) for c in release.clusters)
        if position < len(history.ledgers):
            ledger = history.ledgers[position]
            suppressed = sum(ledger.suppressed.values())
            copies += suppressed - sum(ledger.global_bag_counterfeits.values())
            used += suppressed
    return copies, used


def publish_anony(
    history: SeriesHistory,
    corpus: Sequence[Transaction],
    private_terms: frozenset[str],
    params: PublishParams,
    progress: ProgressCallback | None = None,
) -> Publication:
    """Anony only, no serial protection (the baseline of design.md §9)."""
    report = Progress(progress)
    report("anony")
    release_no = history.next_release_no
    started = time.perf_counter()
    result, partition = anonymise_corpus(corpus, private_terms, params, release_no)
    state = release_state(result, release_no)
    published, ledger = finalise(
        state, corpus, partition, params.randomness_key(release_no), private_terms
    )
    return Publication(
        published,
        ledger,
        {
            "method": "anony",
            "clusters": len(partition),
            "counterfeits": 0,
            "seconds": {"anony": round(time.perf_counter() - started, 4)},
        },
    )


def publish_sanony(
    history: SeriesHistory,
    corpus: Sequence[Transaction],
    private_terms: frozenset[str],
    params: PublishParams,
    progress: ProgressCallback | None = None,
    *,
    before_rates: BeforeRates | None = None,
    keep_in_bag: Mapping[str, int] | None = None,
    explain_kept: ExplainKept | None = None,
    escalate: bool | None = None,
) -> Publication:
    """Publish ``corpus`` so that the whole series stays serially preserving (Theorem 1).

    ``before_rates`` runs after FP1 and before ``ss(s, T^μ)`` is fixed, so that what it adds
    is counted in the published rates and judged by FP2 and the checked post-condition.
    ``keep_in_bag``: copies per term the global bag must keep whatever is suppressed, read
    after ``before_rates`` ran (which may fill it: Kanony's invariant bag, design.md §7);
    ``explain_kept``: what lets such terms go, for a refusal's hint (:class:`Repairer`).

    BP where needed lifts the counts of private terms by the least the global composition
    asks (:meth:`Perturber._backward_global`). A least lift leaves the repair no
    slack where a later step moves the composition: when the release is then refused, it is
    built again with Lemma 4's full lift on whole releases (the ratchet it replaced), and is
    refused only if that fails too; the report says which lift it kept (``global_lift``).

    When that is refused too, ``escalate`` (``None``: ``params.on_infeasible ==
    "escalate"``) climbs the ladder of :func:`_escalate` instead of refusing.
    """
    least = params.backward == "where_needed" and params.global_lift == "least"
    escalating = False

    def report(phase: str, fraction: float) -> None:
        if progress is not None:
            # The ladder's builds report as one phase, not as anony ... verify over again:
            # a publisher sees that the release escalates (docs/api.md, ``escalate``).
            progress(ESCALATE_PHASE if escalating else phase, fraction)

    attempt = partial(
        _publish_sanony,
        history,
        corpus,
        private_terms,
        params,
        report,
        before_rates,
        keep_in_bag,
        explain_kept,
    )

    def build(
        merge: int = 1, beyond_budget: bool = False, raise_certified: Certified = "where_lower"
    ) -> Publication:
        def once(least_lift: bool) -> Publication:
            return attempt(
                least_lift=least_lift,
                merge=merge,
                beyond_budget=beyond_budget,
                raise_certified=raise_certified,
            )

        try:
            return once(least)
        except PublicationFailed:
            if not least:
                raise
        return once(False)

    try:
        return build()
    except PublicationFailed as refused:
        if not (params.on_infeasible == "escalate" if escalate is None else escalate):
            raise
        first = refused
    escalating = True
    return _escalate(build, first)


#: The job's phase while the escalation's ladder builds the release again.
ESCALATE_PHASE = "escalate"

#: A step of the escalation: the release built with ``merge`` neighbouring clusters joined,
#: suppression past the budget or not, and how pinned, certified clusters are mended
#: (:class:`Repairer`'s ``raise_certified``, :data:`Certified`).
Build = Callable[[int, bool, Certified], Publication]


def _escalate(build: Build, refused: PublicationFailed) -> Publication:
    """The ladder when the repair and the suppression budget leave rows over ``r_th``
    (``on_infeasible = "escalate"``): the release is built again, from the same
    randomness, by the same mechanism and judged by the same checked post-condition (every
    row of every release, design.md §4's full adversary), with

    0. s-counterfeits for pinned clusters that a published cluster certifies copies in
       (:class:`Repairer`'s ``raise_certified``, design.md §5.5), when a cluster composition
       is over: one build, an s-counterfeit for every row over there (``"always"``). The
       repair itself gives one only where it leaves the cluster's worst row lower than an s̄
       one (``"where_lower"``), which publishes releases 14 to 20 of the 20,000-row
       BMS-WebView-2 series in their first build (release 16 was refused by this
       step and every later one, over 35 minutes of builds);
    1. coarser clusters (the repair as by default): every 2, 4, 8, ... neighbouring
       clusters joined (:func:`coarsen`), up to one cluster for the whole release; the first
       that publishes is kept. Skipped when every row the repair left over r_th is over
       through the global composition: that takes each whole release as one cluster, so no
       clustering of the release changes it (its rows and copies are the release's,
       whatever the clusters), and on a release of 20,000 rows the levels cost a full build
       each (11 levels, twice each, 30-45 s a build);
    2. then suppression beyond the budget (the repair's own rule: the terms at fault with
       the fewest copies first, in the extreme every copy of a term), from the release's own
       clusters to one cluster, the finest that publishes kept;
    3. last, when a cluster composition is over, steps 0 and 2 at once on the release's own
       clusters, an s-counterfeit for every row over (``"always"``; hard series 26 with no
       budget, and 45 with fresh counterfeits, publish only so).

    Nothing is published that the post-condition did not pass: when no step publishes the
    release is refused with every step in the report (``escalation``). The published report's
    ``escalation`` lists the steps tried, the clusters before and after and the copies
    suppressed beyond the budget per term.
    """
    clusters = _int(refused.details.get("clusters"), 1)
    steps: list[dict[str, object]] = [_step("repair_and_budget", 1, clusters, refused)]
    merges: list[int] = []
    merge = 2
    kinds = refused.details.get("compositions")
    global_only = isinstance(kinds, Mapping) and set(kinds) == {"global"}
    if global_only:
        steps.append(
            {
                "step": "coarser_clusters",
                "published": False,
                "skipped": "every row over r_th is over through the global composition, "
                "which no clustering of the release changes",
            }
        )
    while clusters > 1 and not global_only:
        merges.append(merge)
        if merge >= clusters:
            break
        merge *= 2
    last = refused
    ladder: list[tuple[str, int, bool, Certified]] = [
        ("certified_counterfeits", 1, False, "always")
    ]
    ladder += [("coarser_clusters", m, False, "where_lower") for m in merges]
    ladder += [("suppression_beyond_budget", m, True, "where_lower") for m in [1, *merges]]
    ladder.append(("certified_counterfeits_beyond_budget", 1, True, "always"))
    if global_only:
        # Certified counterfeits mend a cluster's rows, never the global composition.
        ladder = [rung for rung in ladder if rung[3] != "always"]
    for step, merge, beyond, certified in ladder:
        try:
            publication = build(merge, beyond, certified)
        except PublicationFailed as failed:
            steps.append(_step(step, merge, _int(failed.details.get("clusters"), 0), failed))
            last = failed
            continue
        report = publication.report
        beyond_budget = report.pop("suppressed_beyond_budget", {})
        steps.append(
            {
                "step": step,
                "merge": merge,
                "clusters": report.get("clusters"),
                "published": True,
                "suppressed": _per_term(report.get("suppressed")),
            }
        )
        report["escalation"] = {
            "steps": steps,
            "clusters_before": clusters,
            "clusters_after": report.get("clusters"),
            "suppressed_beyond_budget": beyond_budget,
        }
        return publication
    raise PublicationFailed(
        f"{last.message}; escalation (coarser clusters up to one, then suppression beyond "
        "the budget) did not make it safe either",
        {
            **last.details,
            "escalation": {
                "steps": steps,
                "clusters_before": clusters,
                "clusters_after": None,
                "suppressed_beyond_budget": {},
            },
        },
    )


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) else default


def _step(step: str, merge: int, clusters: int, failed: PublicationFailed) -> dict[str, object]:
    """A step of the ladder that was refused, with what its repair left: the rows over r_th,
    the terms at fault and the copies it suppressed, per term."""
    return {
        "step": step,
        "merge": merge,
        "clusters": clusters,
        "published": False,
        "rows_over_threshold": failed.details.get("rows_over_threshold"),
        "compositions": failed.details.get("compositions", {}),
        "terms": failed.details.get("terms", []),
        "suppressed": _per_term(failed.details.get("suppressed")),
    }


def _per_term(counts: object) -> dict[str, object]:
    """Copies per term, sorted, from a report's or a refusal's ``suppressed``."""
    return (
        dict(sorted((str(s), k) for s, k in counts.items())) if isinstance(counts, Mapping) else {}
    )


def _publish_sanony(
    history: SeriesHistory,
    corpus: Sequence[Transaction],
    private_terms: frozenset[str],
    params: PublishParams,
    progress: ProgressCallback | None,
    before_rates: BeforeRates | None,
    keep_in_bag: Mapping[str, int] | None,
    explain_kept: ExplainKept | None,
    *,
    least_lift: bool,
    merge: int = 1,
    beyond_budget: bool = False,
    raise_certified: Certified = "where_lower",
) -> Publication:
    report = Progress(progress)
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
    result, partition = anonymise_corpus(
        corpus, private_terms, params, release_no, history.releases, merge
    )
    state = SeriesState.from_published(history.releases)
    j = state.append(release_state(result, release_no))
    corpus_terms = Counter(t for c in result.clusters for row in c.rows for t in row)
    factory = CounterfeitFactory(
        state, j, corpus_terms, seed, private_terms, twins=params.counterfeits == "blend"
    )
    perturber = Perturber(state, j, factory)
    aligned: Counter[str] = Counter()
    if params.align:
        aligned = one_set_to_bag(state, j, params.anony_threshold)
        if j:
            aligned.update(
                align_release(state, j, params.r_th, params.anony_threshold, perturber.posteriors)
            )
    lap("anony")
    report("bp")
    if not j:
        bp = 0
    elif params.backward == "where_needed":
        bp = perturber.backward_where_needed(params.r_th, least_lift=least_lift)
    else:
        bp = perturber.backward()
    if j and params.align:
        aligned.update(
            align_release(state, j, params.r_th, params.anony_threshold, perturber.posteriors)
        )
    lap("bp")
    report("fp1")
    fp1 = perturber.forward() if j and params.forward_perturbation else 0
    lap("fp1")
    release = state.releases[j]

    def judge() -> list[Violation]:
        release.rates = population_rates(release)
        return perturber.risk(params.r_th).violations()

    extra = dict(before_rates(release, judge)) if before_rates is not None else {}
    report("fp2")
    release.rates = population_rates(release)
    fp2 = perturber.fp2(params.r_th)
    lap("fp2")
    report("verify")
    repairer = Repairer(
        state,
        j,
        perturber,
        params.r_th,
        params.max_suppression,
        params.suppression_floor,
        suppression_history(history) if params.suppression_scope == "series" else (0, 0),
        keep_in_bag,
        explain_kept,
        least_lift=least_lift,
        beyond_budget=beyond_budget,
        raise_certified=raise_certified,
        max_dilution=params.max_dilution,
    )
    try:
        rounds, repaired = repairer.run(params.max_repair_rounds, lambda f: report("verify", f))
        if j and params.forward_perturbation:
            fp1_after, more_rounds, more_repaired = _recheck_forward(
                perturber, repairer, params.max_repair_rounds, lambda f: report("verify", f)
            )
            fp1 += fp1_after
            rounds += more_rounds
            repaired += more_repaired
    except PublicationFailed as failed:
        # The escalation coarsens from here.
        failed.details["clusters"] = len(partition)
        raise
    lap("verify")
    published, ledger = finalise(
        release,
        corpus,
        partition,
        seed,
        private_terms,
        cluster_counts=params.counterfeit_counts != "release",
        release_total=params.counterfeit_counts != "paper",
    )
    ledger.suppressed = dict(sorted(repairer.suppressor.suppressed.items()))
    for position, taken in repairer.suppressor.by_cluster.items():
        ledger.clusters[position].suppressed = dict(sorted(taken.items()))
    counterfeits = ledger.counterfeit_rows
    return Publication(
        published,
        ledger,
        {
            "method": "sanony",
            "clusters": len(partition),
            "rows": published.n_rows,
            "true_rows": len(corpus),
            "counterfeits": counterfeits,
            "counterfeits_by_phase": {
                "bp": bp,
                "bp_global": perturber.bp_global,
                "fp1": fp1,
                "fp2": fp2,
                "repair": repaired,
                # Of the repair's: rows without a term pinned between whole releases.
                "global_dilution": sum(repairer.diluted.values()),
            },
            "counterfeit_rate": round(counterfeits / max(published.n_rows, 1), 6),
            "aligned_to_bag": sum(aligned.values()),
            "global_bag_copies_added": sum(release.global_bag.values())
            - sum(result.global_bag.values()),
            # BP's copies for the whole-release composition: the least lift it used, and
            # what Lemma 4 on whole releases would have added (the old ratchet).
            "global_lift": {
                "mode": "least" if least_lift else "lemma4",
                "copies": sum(perturber.global_lift.values()),
                "lemma4_copies": sum(perturber.global_lift_lemma4.values()),
            },
            "repair_rounds": rounds,
            "suppressed": dict(sorted(repairer.suppressor.suppressed.items())),
            "seconds": seconds,
            **extra,
            # Popped into the report's ``escalation`` (:func:`_escalate`).
            **(
                {"suppressed_beyond_budget": dict(sorted(repairer.suppressor.beyond.items()))}
                if beyond_budget
                else {}
            ),
        },
    )

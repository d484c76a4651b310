"""Wong et al.'s global guarantee for serial publishing (design.md §6).

The adversary knows every published release and which individuals are in each (a voter list);
sensitive values are transient (they may change freely between releases). Within an anonymised
group holding ``n_{j,s}`` copies of s among ``n_j`` rows, each member is linked to s in a
``n_{j,s}/n_j`` share of the possible worlds, independently across releases, so (Lemma 4)

    p(o, s, k) = 1 - prod_j (1 - n_{j,s} / n_j)

over the releases j where o's group held s (Lemma 5: the others do not count). The method keeps
``p(o, s, k) <= 1/l`` for every individual and private term by sizing the groups: Theorem 1 gives
the minimum ratio ``n_k / n_{k,s}`` for the next release, and a strategy (constant ratio,
section 6.1, or geometric, section 6.2) picks the ratio actually required.

Decision (the paper is implicit): the statistics file m(o, s) gets an entry for *every* member of
a group that holds s, whether or not o's own record holds it; the adversary cannot tell, and this
is what Lemma 4 counts (Example 2 links o2 to chlamydia through its group). The required ratio is
likewise checked for every member of the group.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from app.core.errors import InvalidParameter, PublicationFailed
from app.core.history import SeriesHistory
from app.core.model import (
    ClusterLedger,
    Publication,
    PublishedCluster,
    PublishedRelease,
    ReleaseLedger,
    Transaction,
    make_row,
)
from app.core.params import PublishParams
from app.core.progress import Progress, ProgressCallback
from app.core.randomness import mechanism_random
from app.core.validation import individual_keys, validate_corpus
from app.core.variants.wong_groups import (
    Group,
    Need,
    cut_runs,
    form_groups,
    labelled_groups,
    similarity_order,
)

__all__ = [
    "breach_probability",
    "constant_ratio",
    "geometric_ratio",
    "minimum_ratio",
    "publish_wong",
    "required_ratio",
    "StatisticsUpdate",
    "statistics_update",
    "within_guarantee",
]

Entry = tuple[int, int]
#: ``(prod_j (n_j - n_{j,s}), prod_j n_j)`` over a past: all Lemma 4 and Theorem 1 need.
Products = tuple[int, int]
NO_PAST: Products = (1, 1)


@dataclass(frozen=True, slots=True)
class StatisticsUpdate:
    """What a Wong publication adds to the statistics file m(o, s) (design.md §6): individual
    key -> term -> ``(n_k, n_{k,s})`` of this release's group. The publication's
    :attr:`~app.core.model.Publication.extras`."""

    entries: dict[str, dict[str, Entry]] = field(default_factory=dict)


def statistics_update(publication: Publication) -> dict[str, dict[str, Entry]]:
    """The statistics-file entries a publication adds (none for another method's)."""
    update = publication.extra(StatisticsUpdate)
    return update.entries if update is not None else {}


def _products(entries: Iterable[Sequence[int]]) -> Products:
    """``(prod_j (n_j - n_{j,s}), prod_j n_j)`` over the entries with ``n_{j,s} > 0``."""
    kept, total = 1, 1
    for n_j, n_js in entries:
        if n_j < 1 or not 0 <= n_js <= n_j:
            raise ValueError(f"invalid statistics entry (n_j={n_j}, n_j,s={n_js})")
        if n_js:  # Lemma 5: a release where o's group lacked s does not count
            kept *= n_j - n_js
            total *= n_j
    return kept, total


def breach_probability(entries: Sequence[Entry]) -> float:
    """Breach probability ``p(o, s, k)`` of Lemma 4 (formula 3).

    ``p = 1 - prod_j (1 - n_{j,s}/n_j)``, computed exactly and rounded once.

    Parameters
    ----------
    entries:
        ``(n_j, n_{j,s})`` for the releases j where o's group held s: group size and copies of
        s in it. Entries with ``n_{j,s} = 0`` contribute nothing (Lemma 5).

    Examples
    --------
    Example 2 of the paper: groups of size 2 (Figure 2), then of size 4 (Figure 4).

    >>> breach_probability([(2, 1), (2, 1)])
    0.75
    >>> breach_probability([(4, 1), (4, 1)])
    0.4375
    """
    kept, total = _products(entries)
    return float(Fraction(total - kept, total))


def within_guarantee(entries: Sequence[Entry], l: int) -> bool:  # noqa: E741 - the paper's ℓ
    """Whether ``p(o, s, k) <= 1/l`` (Problem 1), decided in exact integer arithmetic.

    >>> within_guarantee([(4, 1), (4, 1)], 2), within_guarantee([(2, 1), (2, 1)], 2)
    (True, False)
    """
    kept, total = _products(entries)
    return l * (total - kept) <= total


def _minimum_exact(past: Products, l: int) -> Fraction | None:  # noqa: E741
    """Theorem 1 from the products ``(prod (n_j - n_{j,s}), prod n_j)``; None if infeasible."""
    kept, total = past
    denominator = l * kept - (l - 1) * total
    if denominator <= 0:
        return None
    return Fraction(l * kept, denominator)


def minimum_ratio(past: Sequence[Entry], l: int) -> float:  # noqa: E741 - the paper's ℓ
    """Minimum group size ratio ``n_k / n_{k,s}`` of Theorem 1 (formula 4), ``ñ(k)``.

    ``l * prod (n_j - n_{j,s}) / (l * prod (n_j - n_{j,s}) - (l - 1) * prod n_j)`` over the past
    releases j where o's group held s; ``l`` when there are none (``ñ(1) = l``).

    Returns
    -------
    float
        The ratio, or ``math.inf`` when no ratio is feasible: the denominator is <= 0, i.e.
        ``p(o, s, k-1) >= 1/l`` already, so o's next group must not hold s (it is then
        suppressed, section 6.3). This function never raises for a well-formed past.

    Examples
    --------
    Example 3: after two releases in groups of 4 holding one chlamydia each, with l = 2.

    >>> minimum_ratio([(4, 1), (4, 1)], 2)
    9.0
    >>> minimum_ratio([], 2), minimum_ratio([(2, 1)], 2)
    (2.0, inf)
    """
    ratio = _minimum_exact(_products(past), l)
    return math.inf if ratio is None else float(ratio)


def constant_ratio(l: float, k_prime: int) -> float:  # noqa: E741 - the paper's ℓ
    """Constant-ratio strategy ``ñ_c = 1 / (1 - (1 - 1/l)^(1/k'))`` (section 6.1, Table 1).

    The ratio that, kept for ``k'`` releases linking o to s, reaches exactly ``p = 1/l``.

    >>> round(constant_ratio(2, 5), 2), round(constant_ratio(5, 20), 2)
    (7.73, 90.13)
    """
    if l <= 1 or k_prime < 1:
        raise InvalidParameter("constant_ratio needs l > 1 and k_prime >= 1", {"param": "l"})
    # 1 - (1 - 1/l)^(1/k') written with expm1/log1p so that large k' keeps its precision.
    return -1.0 / math.expm1(math.log1p(-1.0 / l) / k_prime)


def geometric_ratio(past: Sequence[Entry], l: int, alpha: float) -> float:  # noqa: E741
    """Geometric strategy ``alpha * ñ(k)`` (section 6.2); ``alpha > 1`` by Theorem 2.

    >>> geometric_ratio([(4, 1), (4, 1)], 2, 2.0)
    18.0
    """
    return alpha * minimum_ratio(past, l)


def _required_exact(past: Products, params: PublishParams) -> Fraction | None:
    minimum = _minimum_exact(past, params.l)
    if minimum is None:
        return None
    if params.strategy == "geometric":
        return Fraction(params.alpha) * minimum
    if params.strategy == "constant_ratio":
        # Theorem 1's minimum still binds once o has been linked to s k' times.
        return max(Fraction(constant_ratio(params.l, params.k_prime)), minimum)
    raise InvalidParameter(
        f"params.strategy: unknown strategy {params.strategy!r}", {"param": "strategy"}
    )


def required_ratio(past: Sequence[Entry], params: PublishParams) -> float:
    """The ratio ``n_k / n_{k,s}`` a new group holding s must reach for o (design.md §6).

    ``max(ñ_c, ñ(k))`` for ``constant_ratio`` (the constant ratio while it suffices, Theorem 1's
    minimum once o has been linked to s more than ``k'`` times), ``alpha * ñ(k)`` for
    ``geometric``; ``math.inf`` when Theorem 1 is infeasible.

    >>> required_ratio([], PublishParams(l=2, k_prime=2)) > 3.41
    True
    >>> required_ratio([(4, 1), (4, 1)], PublishParams(l=2, k_prime=2))
    9.0
    """
    ratio = _required_exact(_products(past), params)
    return math.inf if ratio is None else float(ratio)


def _need(ratio: Fraction | None) -> Need:
    if ratio is None:
        return Need(1, 0, math.inf)
    return Need(ratio.numerator, ratio.denominator, float(ratio))


def _member_pasts(
    keys: Sequence[str],
    statistics: Mapping[str, Mapping[str, Sequence[Sequence[int]]]],
    present: frozenset[str],
) -> list[dict[str, Products]]:
    """Per transaction, the statistics file m(o, s) as products, for the terms of this corpus.

    A term with no copy in the corpus can be in no group, so its past does not matter here.
    """
    pasts: list[dict[str, Products]] = []
    for key in keys:
        stats = statistics.get(key)
        if not stats:
            pasts.append({})
            continue
        terms = present & stats.keys() if len(stats) > len(present) else stats.keys() & present
        pasts.append({term: _products(stats[term]) for term in terms})
    return pasts


def _member_needs(
    pasts: Sequence[Mapping[str, Products]], params: PublishParams, base: Need
) -> list[dict[str, Need]]:
    """Per transaction, the terms whose requirement exceeds the base one (memoised)."""
    cache: dict[Products, Need | None] = {}  # None: no more than the base
    needs: list[dict[str, Need]] = []
    for past in pasts:
        own: dict[str, Need] = {}
        for term, products in past.items():
            if products not in cache:
                need = _need(_required_exact(products, params))
                cache[products] = need if need.exceeds(base) else None
            raised = cache[products]
            if raised is not None:
                own[term] = raised
        needs.append(own)
    return needs


def _initial_runs(
    corpus: Sequence[Transaction], nonprivate: Sequence[frozenset[str]], cluster_size: int
) -> list[list[int]]:
    order = similarity_order(nonprivate)
    labels = [t.cluster for t in corpus]
    if all(label is not None for label in labels):
        return labelled_groups([str(label) for label in labels], order)
    return cut_runs(order, cluster_size)


def publish_wong(
    history: SeriesHistory,
    corpus: Sequence[Transaction],
    private_terms: frozenset[str],
    params: PublishParams,
    progress: ProgressCallback | None = None,
) -> Publication:
    """Publish ``corpus`` as the next release under Wong et al.'s global guarantee (design.md §6).

    Groups start as runs of ``params.cluster_size`` transactions in the similarity order (or
    the client's ``cluster`` labels when every transaction has one) and are merged bottom-up
    (:func:`app.core.variants.wong_groups.form_groups`) until every member o and term s of a
    group meet
    ``n_k / n_{k,s} >= required_ratio(m(o, s))``; copies of s are suppressed where that fails
    (section 6.3). Groups are published anatomy-style: rows (non-private sets, shuffled with
    ``params.seed``) and private-term counts, no global bag.

    Returns
    -------
    Publication
        Its :class:`StatisticsUpdate` (:func:`statistics_update`) holds
        ``[o][s] = (n_k, n_{k,s})`` for every member o of a group holding s.

    Raises
    ------
    InvalidCorpus
        An empty corpus, a transaction without ``individual``, or an individual twice.
    PublicationFailed
        The post-condition ``p(o, s, k) <= 1/l`` (counting this release) fails for a pair.
    """
    report = Progress(progress)
    report("anony", 0.0)
    validate_corpus(corpus, require_individual=True)
    keys = individual_keys(corpus, "wong")
    private = [t.terms & private_terms for t in corpus]
    nonprivate = [t.terms - private_terms for t in corpus]
    base = _need(_required_exact(NO_PAST, params))
    present = frozenset().union(*private)
    pasts = _member_pasts(keys, history.statistics, present)
    needs = _member_needs(pasts, params, base)
    runs = _initial_runs(corpus, nonprivate, params.cluster_size)
    outcome = form_groups(runs, nonprivate, private, needs, base)
    report("anony", 1.0)
    release, ledger, update = _assemble(
        history.next_release_no, corpus, keys, nonprivate, outcome.groups, private_terms, params
    )
    ledger.suppressed = dict(sorted(outcome.suppressed.items()))
    report("verify", 0.0)
    worst = _verify(outcome.groups, pasts, params.l)
    report("verify", 1.0)
    sizes = [g.size for g in outcome.groups]
    summary: dict[str, object] = {
        "method": "wong",
        "strategy": params.strategy,
        "l": params.l,
        "required_ratio_first": float(base.value),
        "initial_groups": outcome.initial_groups,
        "groups": len(sizes),
        "merges": outcome.merges,
        "mean_group_size": len(corpus) / len(sizes),
        "max_group_size": max(sizes),
        "suppressed": sum(outcome.suppressed.values()),
        "suppressed_by_term": dict(ledger.suppressed),
        "linked_pairs": sum(len(terms) for terms in update.values()),
        "max_breach_probability": worst,
    }
    return Publication(release, ledger, summary, extras=StatisticsUpdate(update))


def _assemble(
    release_no: int,
    corpus: Sequence[Transaction],
    keys: Sequence[str],
    nonprivate: Sequence[frozenset[str]],
    groups: Sequence[Group],
    private_terms: frozenset[str],
    params: PublishParams,
) -> tuple[PublishedRelease, ReleaseLedger, dict[str, dict[str, tuple[int, int]]]]:
    rng = mechanism_random(params.randomness_key(release_no), "wong-rows")
    clusters: list[PublishedCluster] = []
    ledgers: list[ClusterLedger] = []
    update: dict[str, dict[str, tuple[int, int]]] = {}
    totals: Counter[str] = Counter()
    for number, group in enumerate(groups, start=1):
        members = sorted(group.members)
        rng.shuffle(members)  # row order must not follow the input or the similarity order
        counts = {s: c for s, c in sorted(group.counts.items()) if c > 0}
        totals.update(counts)
        clusters.append(
            PublishedCluster(
                cluster_id=f"c{number}",
                rows=[make_row(nonprivate[i]) for i in members],
                private_counts=counts,
            )
        )
        ledgers.append(ClusterLedger(individuals=[corpus[i].individual for i in members]))
        entry = {s: (group.size, c) for s, c in counts.items()}
        for i in members:
            update[keys[i]] = dict(entry)
    # Rates of the published copies: rates taken before suppression would reveal how many
    # copies were dropped, i.e. hidden copies outside every group (decision, see docs).
    rates = {s: totals.get(s, 0) / len(corpus) for s in sorted(private_terms)}
    release = PublishedRelease(
        release_no=release_no,
        clusters=clusters,
        global_bag={},
        population_rates=rates,
        private_terms=private_terms,
    )
    return release, ReleaseLedger(clusters=ledgers), {k: v for k, v in update.items() if v}


def _verify(
    groups: Sequence[Group],
    pasts: Sequence[Mapping[str, Products]],
    l: int,  # noqa: E741 - the paper's ℓ
) -> float:
    """Check ``p(o, s, k) <= 1/l`` for every pair this release links; return the largest p.

    Pairs the release does not link keep their previous p (Lemma 5), so they need no check.
    Members without a past for s share one check per group and term.
    """
    worst = 0.0
    for group in groups:
        n = group.size
        for term, c in group.counts.items():
            worst = max(worst, _checked(term, NO_PAST, n, c, l))
        for i in group.members:
            past = pasts[i]
            if past:
                for term in past.keys() & group.counts.keys():
                    worst = max(worst, _checked(term, past[term], n, group.counts[term], l))
    return worst


def _checked(term: str, past: Products, n: int, c: int, l: int) -> float:  # noqa: E741
    """Lemma 4 with this release's ``(n, c)`` appended, checked exactly against ``1/l``."""
    kept, total = past[0] * (n - c), past[1] * n
    if l * (total - kept) > total:
        raise PublicationFailed(
            f"breach probability of a member for {term!r} would exceed 1/{l}",
            {"term": term, "group_size": n, "copies": c},
        )
    return (total - kept) / total

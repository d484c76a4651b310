"""The checked post-condition of Sanony (design.md §5.5; Theorem 1).

Every row of every release must be serially preserving once the new release is out. Rows of
the new release are mended with s̄-counterfeits in their own cluster (as FP2 does). Rows of a
published release can only be mended through the new release: for the overlap that pins
their range, an s-counterfeit when the new cluster caps the copies of s in the overlap
(``f2`` too low) or an s̄-counterfeit when it forces copies in (``f1`` too high), which is
BP's rule (Lemma 4) applied to the pair at fault.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

from app.core.errors import PublicationFailed
from app.core.perturbation.perturber import Perturber
from app.core.perturbation.suppression import Suppressor
from app.core.risk.assess import cluster_posteriors, serial_risk
from app.core.risk.incremental import Violation
from app.core.risk.overlap import Overlap, cluster_cover, s_range
from app.core.risk.state import ClusterRef, SeriesState

__all__ = [
    "Certified",
    "ExplainKept",
    "Repairer",
    "least_dilution_rows",
    "worst_posterior_with_row",
    "worst_risk_with_rows",
]


#: Rounds without fewer or milder violations after which repairing is judged futile: some
#: risks cannot be lowered from the new release (an earlier release wholly inside it pins the
#: copies of s in the overlap), and counterfeits would only pile up.
_STALL_ROUNDS = 12

#: Suppressions of a copy that a mend of a published cluster put back, after which the pair is
#: left to counterfeits (see ``Repairer._raised``).
_UNDONE = 2


#: How a pinned cluster that a published cluster certifies copies in is mended
#: (:meth:`Repairer._mend`): ``"where_lower"`` (the default), an s-counterfeit where it leaves
#: the cluster's worst row lower than an s̄ one would, else an s̄-counterfeit; ``"always"``,
#: an s-counterfeit for every row over (the escalation's certified steps); ``None``, always an
#: s̄-counterfeit (the repair of 0.1.0).
Certified = Literal["where_lower", "always"] | None

#: For terms whose last copies the global bag keeps: (the change of parameters that lets them
#: leave it, or ``None`` when none does; a note on why).
ExplainKept = Callable[[Sequence[str]], tuple[str | None, str]]


def _kept_by_the_bag(held: Sequence[str]) -> tuple[str | None, str]:
    return (
        f"letting {', '.join(held)} leave the global bag (its last copies are kept by the "
        "bag's invariance, design.md §7)",
        "",
    )


#: The non-private set of :func:`worst_posterior_with_row`'s probe row: no release holds it,
#: so the row joins no overlap, as a fresh counterfeit does.
_PROBE: tuple[str, ...] = ("\x00probe",)


def worst_posterior_with_row(state: SeriesState, ref: ClusterRef, s: str, copies: int) -> float:
    """The highest β_cluster for s (formula 12 over the cluster's cover) among the rows of
    cluster ``ref``, were it given one more row outside every overlap carrying ``copies`` of
    s; the cluster is left exactly as it was (rows, counts, revision)."""
    cluster = state.cluster(ref)
    cluster.own_rows().append(_PROBE)
    cluster.counts[_PROBE] += 1
    cluster.private_counts[s] += copies
    try:
        betas = cluster_posteriors(state, ref, only=(s,))
    finally:
        cluster.rows.pop()
        del cluster.counts[_PROBE]
        cluster.private_counts[s] -= copies
        if not cluster.private_counts[s]:
            del cluster.private_counts[s]
    return max((beta.get(s, 0.0) for beta in betas.values()), default=0.0)


def worst_risk_with_rows(
    state: SeriesState, ref: ClusterRef, terms: Sequence[str], rows: int, cover: list[Overlap]
) -> float:
    """The highest serial risk (formula 15 over formula 12) for ``terms`` among the rows of
    cluster ``ref``, were it given ``rows`` more rows outside every overlap and without a
    private term (s̄-counterfeits); the cluster is left exactly as it was. ``cover`` is the
    cluster's (:func:`~app.core.risk.overlap.cluster_cover`): the added rows join no overlap,
    so it is the same with them."""
    cluster = state.cluster(ref)
    cluster.own_rows().extend([_PROBE] * rows)
    cluster.counts[_PROBE] += rows
    try:
        betas = cluster_posteriors(state, ref, only=terms, cover=cover)
    finally:
        del cluster.rows[-rows:]
        del cluster.counts[_PROBE]
    rates = state.releases[ref[0]].rates
    return max(
        (serial_risk(beta, rates.get(s, 0.0)) for row in betas.values() for s, beta in row.items()),
        default=0.0,
    )


def least_dilution_rows(
    state: SeriesState, ref: ClusterRef, terms: Sequence[str], r_th: float, most: int
) -> int | None:
    """The least number of s̄-counterfeits, up to ``most``, that brings every row of cluster
    ``ref`` within ``r_th`` for ``terms`` (:func:`worst_risk_with_rows`: formula 12 over its
    cover, the rows outside every overlap as the factory's are), or ``None``.

    Why: one row a round per term took 84 rounds at release 20 of the
    20 x 20,000 BMS-WebView-2 series, and every round judged the whole series again: clusters
    whose rows 19 earlier releases put at risk 50-150 need dozens of rows. The count is found
    by doubling, then bisection; each count returned is checked to bring the rows within
    ``r_th``, and the count below it (when above 1) checked not to, so where the worst risk is
    not monotone in the count it is still safe, only perhaps not the least. The repair passes
    the rounds it has left as ``most``: no more rows than one a round would have added. The
    next round judges the whole series again, as it did; published clusters these rows move
    are mended then."""
    cover = cluster_cover(state, ref)
    limit = r_th * (1 + 1e-9)

    def within(rows: int) -> bool:
        return worst_risk_with_rows(state, ref, terms, rows, cover) <= limit

    over, rows = 0, 1
    while not within(rows):
        if rows >= most:
            return None
        over, rows = rows, min(2 * rows, most)
    while rows - over > 1:
        middle = (over + rows) // 2
        if within(middle):
            rows = middle
        else:
            over = middle
    return rows


class Repairer:
    """Finds rows over ``r_th`` anywhere in the series and adds counterfeits to mend them."""

    def __init__(
        self,
        state: SeriesState,
        j: int,
        perturber: Perturber,
        r_th: float,
        max_suppression: float = 0.0,
        suppression_floor: int = 0,
        earlier: tuple[int, int] = (0, 0),
        keep_in_bag: Mapping[str, int] | None = None,
        explain_kept: ExplainKept | None = None,
        *,
        least_lift: bool = True,
        beyond_budget: bool = False,
        raise_certified: Certified = "where_lower",
        max_dilution: float = 0.0,
    ) -> None:
        """``explain_kept``: for the terms ``keep_in_bag`` holds that a refusal leaves over
        r_th, the change of parameters that lets them leave the bag and a note, or ``None``
        and why none does (Kanony's, which knows why it keeps each term)."""
        self.state = state
        self.j = j
        self.perturber = perturber
        self.r_th = r_th
        self.suppressor = Suppressor(
            state,
            j,
            max_suppression,
            suppression_floor,
            earlier,
            keep_in_bag,
            beyond_budget=beyond_budget,
        )
        #: Terms whose copies the repair added to the new release for a published row (its
        #: overlap needs them, f2 of Lemma 4), with the new clusters that received them (none
        #: for the global bag). A global lift of such a term is not suppressed at once: that
        #: would only undo the mend. Once suppression has taken s from such a cluster
        #: ``_UNDONE`` times, it is undoing that mend and the two would alternate for ever
        #: (seen at 1M rows: one copy added, one suppressed, every two rounds, until the round
        #: limit refused the release with most of its budget left); from then on the
        #: cluster's own rows are diluted with s̄-counterfeits instead, or given
        #: s-counterfeits with ``raise_certified`` (:meth:`_mend`).
        self._raised: dict[str, set[int]] = {}
        #: Rows without s added for terms pinned between whole releases, per term
        #: (:meth:`_dilute_globally`; reported as ``global_dilution``), at most
        #: ``max_dilution`` of the new release's true rows in all.
        self.diluted: Counter[str] = Counter()
        self.max_dilution = max_dilution
        self._true_rows = sum(c.n_true for c in state.releases[j].clusters)
        self.explain_kept: ExplainKept = explain_kept or _kept_by_the_bag
        #: Mend the global composition with the least lift of a term at once
        #: (:meth:`_lift_globally`); off, one copy a round (the repair of 0.1.0).
        self.least_lift = least_lift
        #: When a pinned cluster that a published cluster certifies copies in gets
        #: s-counterfeits rather than s̄ ones (:meth:`_mend`, :data:`Certified`). Always, made
        #: the default once (2f9e40e), it refused fixed hard series 20, which dilution
        #: publishes; where it lowers the cluster's worst row, the default, it publishes every
        #: hard series the dilution did.
        self.raise_certified = raise_certified

    def violations(self) -> list[Violation]:
        """Rows over ``r_th``: the new release in full; published releases where they changed.

        A published cluster's posterior changes only through its overlaps with the new
        release, and a *safe* overlap (Lemma 3: its range holds the cluster's whole s-range)
        has likelihood ratio exactly 1 for either z. Published clusters whose overlaps with
        the new release are all safe keep the risk verified when they were published, so only
        the others are judged; the global composition is judged for every row. Between rounds
        only what the round changed is recomputed (:class:`~app.core.risk.incremental.
        SeriesRisk`).
        """
        return self.perturber.risk(self.r_th).violations()

    def run(self, max_rounds: int, progress: Callable[[float], None]) -> tuple[int, int]:
        """Repair until no row is over ``r_th``; returns (rounds, counterfeits added)."""
        added = 0
        best: tuple[int, float] | None = None
        stalled = 0
        resorting = False
        #: Rounds already spent mending one cluster judged alone (:meth:`_mend_alone`).
        spent = 0
        for round_no in range(max_rounds + 1):
            if spent:
                spent -= 1
                continue
            progress(min(round_no / max(max_rounds, 1), 1.0))
            found = self.violations()
            if not found:
                return round_no, added
            score = (len(found), max(v[3] for v in found))
            if best is None or score < best:
                best, stalled = score, 0
            else:
                stalled += 1
            if round_no == max_rounds or stalled >= 2 * _STALL_ROUNDS:
                break
            lifted, mended = self._lift_globally(found) if self.least_lift else (0, set())
            # A term pinned between whole releases: suppression would undo the lift.
            between = {v[2] for v in found if self._own_global(v) and v[2] in self._raised}
            diluted, eased = self._dilute_globally(between - mended)
            if lifted or diluted:
                # The least lift (or dilution) for these terms at once; what it leaves is
                # judged next round.
                added += lifted + diluted
                found = [v for v in found if v[2] not in mended | eased]
                if not found:
                    continue
            hopeless = [v for v in found if self._hopeless(v)]
            if hopeless and self.suppressor.suppress(hopeless):
                # No counterfeit lowers these rows: suppress at once rather than pile up
                # counterfeits for _STALL_ROUNDS rounds first.
                best, stalled = None, 0
                continue
            if stalled >= _STALL_ROUNDS:
                resorting = True
            if resorting:
                # Counterfeits no longer help the new release's rows: suppression, the last
                # resort (design.md §5). Published rows can only be mended by counterfeits.
                published: list[Violation] = []
                pinned: list[Violation] = []
                own: list[Violation] = []
                for v in found:
                    if v[0][0] != self.j:
                        published.append(v)
                    else:
                        (pinned if self._is_pinned(v) else own).append(v)
                if self.suppressor.suppress(own):
                    stalled = 0
                    best = None
                elif not published and not pinned:
                    break
                added += self._mend(published + pinned, max_rounds - round_no)
                if not published and not own:
                    more, spent = self._mend_alone(pinned, max_rounds - round_no - 1, True)
                    added += more
                continue
            added += self._mend(found, max_rounds - round_no)
            more, spent = self._mend_alone(found, max_rounds - round_no - 1, False)
            added += more
        worst = sorted(found, key=lambda v: -v[3])[:10]
        suppressed = sum(self.suppressor.suppressed.values())
        terms = sorted({v[2] for v in found})
        held = sorted(self.suppressor.held_by_bag.intersection(terms))
        hint = self._hint(terms, held, worst[0][3] if worst else 0.0, round_no == max_rounds)
        raise PublicationFailed(
            f"the series is not serially preserving after {round_no} repair rounds: "
            f"{len(found)} rows over r_th = {self.r_th} with {suppressed} of "
            f"{self.suppressor.budget} budgeted copies suppressed; nothing was stored; "
            f"{hint} may publish this snapshot",
            {
                "rows_over_threshold": len(found),
                "suppressed": dict(self.suppressor.suppressed),
                "suppression_budget": self.suppressor.budget,
                "rounds": round_no,
                "hint": hint,
                "terms": terms,
                "kept_in_bag": held,
                # Rows over r_th per composition ("cluster", "global"): the escalation skips
                # coarser clusters when only the global composition is left (design.md §5.5).
                "compositions": dict(sorted(Counter(v[4] for v in found).items())),
                "worst": [
                    {
                        "release_no": self.state.releases[ref[0]].release_no,
                        "cluster_id": self.state.cluster(ref).cluster_id,
                        "row": list(row),
                        "term": s,
                        "serial_risk": risk,
                        "composition": kind,
                    }
                    for ref, row, s, risk, kind in worst
                ],
            },
        )

    def _hint(self, terms: list[str], held: list[str], top: float, out_of_rounds: bool) -> str:
        """What the publisher can change for the rows left over r_th (a
        refusal once named r_th and the budget where neither could take the copies at fault).

        Terms whose last copies the bag's promise holds (Kanony, design.md §7) go only by letting
        them leave the bag (``explain_kept`` says how); the others by a larger budget when it
        is spent, or more rounds when the guard was reached; every change is needed, so they
        are joined by "and". A higher r_th is always named, with the worst row's risk it would
        have to reach for these rows as they are (docs/lab/sanony.md, "Suppression budget")."""
        r_th = f"a higher r_th (the worst row's serial risk is {top:.4g}"
        needs: list[str] = []
        if held:
            change, note = self.explain_kept(held)
            if change is None:
                # A term that no parameter lets go: nothing else can publish these rows.
                return f"{r_th}; {note})"
            needs.append(change)
        spent = sum(self.suppressor.suppressed.values()) >= self.suppressor.budget
        if len(held) < len(terms) and spent:
            needs.append("a larger max_suppression (or suppression_floor)")
        elif len(held) < len(terms) and out_of_rounds:
            needs.append("more max_repair_rounds, a larger max_suppression")
        if needs:
            return f"{' and '.join(needs)}, or {r_th})"
        return f"{r_th}; counterfeits and suppression no longer lower these rows)"

    def _lift_globally(self, found: list[Violation]) -> tuple[int, set[str]]:
        """Copies of s in the new release's global bag, the least number that brings every
        row of every release within ``r_th`` for s through the global composition, for the
        terms the global composition puts over ``r_th``; up to Lemma 4's shortfall on whole
        releases (:meth:`Perturber.lemma4_global_shortfall`).

        One copy a round, as :meth:`_mend_published_release` adds, took more rounds than the
        repair has where BP's global lift is the least one: a term whose count
        fell needs a few copies at once, and suppressing the new release's rows meanwhile
        only lowered the count further. Terms no lift within that bound mends (a term rising
        over every earlier release) are left to the other remedies. Returns the copies
        added and the terms they mended."""
        new = self.state.releases[self.j]
        risk = self.perturber.risk(self.r_th)
        added = 0
        lifted: set[str] = set()
        for s in sorted({v[2] for v in found if v[4] == "global"}):
            start = new.total(s)
            cap = self.perturber.lemma4_global_shortfall(s)
            if cap <= 0:
                continue
            least = risk.least_total(s, start + 1, start + cap, new.rates.get(s, 0.0))
            if least is None:
                continue
            lift = least - start
            self._raised.setdefault(s, set())
            self.perturber.add_global(lift, {s: lift}, "fp2")
            # The published rate follows the lifted count (never falls): formula 15 divides
            # by it, and the checked post-condition judges every row against it.
            new.rates[s] = max(new.rates.get(s, 0.0), new.total(s) / new.n)
            added += lift
            lifted.add(s)
        return added, lifted

    def _own_global(self, violation: Violation) -> bool:
        """A row of the new release over r_th through the global composition."""
        return violation[0][0] == self.j and violation[4] == "global"

    def _dilute_globally(self, terms: set[str]) -> tuple[int, set[str]]:
        """Rows without s in the new release, the least number that brings every row of
        every release within ``r_th`` for s through the global composition, for the terms
        pinned from both sides at the level of whole releases: the repair raised s for a
        published release's rows (:meth:`_lift_globally`, ``_raised``), so one copy fewer
        puts those rows back over, and the new release's own rows are over with these copies.

        Suppression and the lift used to undo each other there until the round limit: on
        release 5 of the 40,000-row core series (benchmarks/core_publish.py) release 2's
        rows were at risk 8.77 with 4 copies of a rare term and release 5's at 8.77 with 5,
        and the release was refused after 200 rounds with 95 copies of the term suppressed.
        The new release's rows outside an overlap carry the copies the other release caps it
        at, so more rows without s lower their posterior while every published range stays
        as it is (:meth:`~app.core.risk.composition.GlobalComposition.least_dilution`). At
        most ``max_dilution`` of the release's true rows in all; past that the usual remedies
        go on. Returns the rows added and the terms they mended.

        Not for a term the suppression budget can no longer take (a rising term, not
        pinned): tried, it published 2 more of the 120 orders of the reviewer's
        BMS-WebView-1 snapshots without escalating (1 copy beyond the budget each), but
        cost 266 counterfeit rows (21%) instead of 47 on a series at r_th 2 to keep 6
        copies within the budget."""
        if not terms:
            return 0, set()
        new = self.state.releases[self.j]
        risk = self.perturber.risk(self.r_th)
        added = 0
        eased: set[str] = set()
        for s in sorted(terms):
            # The cap counts every dilution row of this release, whichever term it was for.
            cap = int(self.max_dilution * self._true_rows) - sum(self.diluted.values())
            if cap < 1:
                break
            rows = risk.least_dilution(s, new.total(s), new.rates.get(s, 0.0), cap)
            if not rows:
                continue
            self.perturber.dilute_release(rows, "fp2")
            self.diluted[s] += rows
            added += rows
            eased.add(s)
        return added, eased

    def _hopeless(self, violation: Violation) -> bool:
        """A row of the new release lifted by the global composition (section 2.3.2): mended by
        suppression at once, within the budget, not by counterfeits first.

        design.md §5's named case is a term no earlier release holds: every earlier release pins the
        overlap's copies of s at 0. A term *rising* over an earlier release's count is the
        same case in part: that release caps the overlap's copies at its count, so the rows
        outside the overlap carry the excess, and the posterior of such a row is about
        ``(N(s) - r2)/(N - N(O))`` per earlier release (formulas 5, 6, 13; product 12). A
        counterfeit row of a fresh set widens ``N - N(O)`` by one, a fraction of a percent;
        one suppressed copy removes a whole share of the excess. Measured on the refused grid
        series (BMS-WebView-2, rep 80%, seed 1): counterfeits first spent 403 rows (9.4% of
        release 5) to save about 16 copies; suppression first publishes the series with 0.5%
        counterfeits instead of 3.1% (docs/core.md, "Suppression").

        Not for a term whose copies the repair raised for a published row: there the new
        release is pinned from both sides, and suppression would undo the mend."""
        return self._own_global(violation) and violation[2] not in self._raised

    def _is_pinned(self, violation: Violation) -> bool:
        ref, _row, s, _risk, kind = violation
        if kind != "cluster" or ref[1] not in self._raised.get(s, ()):
            return False
        taken = self.suppressor.by_cluster.get(ref[1])
        return taken is not None and taken[s] >= _UNDONE

    def _mend_alone(
        self, found: list[Violation], rounds_left: int, pinned: bool
    ) -> tuple[int, int]:
        """After a round whose rows over ``r_th`` were all of one cluster of the new release
        (``found``, just mended): the same mend again, round after round, judging that cluster
        alone, while its worst row falls and stays within the round's kind (``pinned``: every
        row pinned, as the resorting rounds mend them). Returns the counterfeit rows added and
        the rounds spent, at most ``rounds_left``, so that a full round always follows.

        Release 20 of the 20 x 20,000 BMS-WebView-2 series ended with 45
        rounds of one pinned cluster, each lowering its worst row by 0.1-0.15 with one
        counterfeit, each judging the whole series again (0.13-0.2 s). What the cluster's rows
        read does not depend on the rest of release j; rows elsewhere that these counterfeits
        move (a published cluster's overlap, the global composition) are judged by the full
        round that follows, and mended there as before. The post-condition is that full
        round's, unchanged."""
        c = found[0][0][1] if found else -1
        if not found or any(v[0] != (self.j, c) or v[4] != "cluster" for v in found):
            return 0, 0
        risk = self.perturber.risk(self.r_th)
        worst = max(v[3] for v in found)
        added = spent = 0
        while spent < rounds_left:
            own = risk.cluster_violations(c)
            # None left (the default), or the worst row no lower: the full round decides.
            top = max((v[3] for v in own), default=worst)
            if top >= worst or any(self._is_pinned(v) != pinned or self._hopeless(v) for v in own):
                break
            worst = top
            added += self._mend(own, rounds_left - spent)
            spent += 1
        return added, spent

    def _mend(self, found: list[Violation], rounds_left: int) -> int:
        """One counterfeit per (cluster, term, composition) over ``r_th``, except for the new
        release's own clusters that s̄-counterfeits mend: each gets at once the rows that
        :func:`least_dilution_rows` finds bring all its terms within ``r_th``."""
        done: set[tuple[object, ...]] = set()
        added = 0
        diluting: dict[int, set[str]] = {}
        for violation in found:
            ref, _row, s, _risk, kind = violation
            key = (ref if kind == "cluster" else ref[0], s, kind)
            if key in done:
                continue
            done.add(key)
            if ref[0] == self.j and kind == "cluster" and not self._is_pinned(violation):
                diluting.setdefault(ref[1], set()).add(s)
                continue
            if ref[0] == self.j:
                # With raise_certified, a pinned cluster (a
                # published row needs its copies of s, and suppressing them undid that mend)
                # whose overlaps hold published clusters certifying copies there (r1 >= 1,
                # formula 6, :meth:`_certified`) gets s-counterfeits, which serve both sides:
                # formula 12's ratio for its rows in such an overlap is about
                # (r1 / N(O)) / (N(s, C) / N(C)). An s̄-counterfeit raises N(C) and
                # the ratio; an s-counterfeit lowers it, and only widens the published
                # clusters' ranges. Release 14 of the 20,000-row BMS-WebView-2 series
                #: a cluster of 111 rows, 100 of them one set, 1 copy left of a
                # term the 13 earlier releases certify in its overlaps (β = 0.99, risk 29.8),
                # was refused after 83 rounds of s̄-counterfeits and every escalation step
                # tried; with s-counterfeits it publishes. They raise the cluster's rows
                # outside those overlaps, though: by default one is given only where it
                # lowers the cluster's worst row (:meth:`_raising_lowers`); the escalation's
                # certified steps give one for every row over.
                certified = (
                    self.raise_certified is not None
                    and self._is_pinned(violation)
                    and self._below_limit(ref[1], s)
                    and self._certified(ref, s)
                    and (self.raise_certified == "always" or self._raising_lowers(ref, s))
                )
                self.perturber.add(ref[1], 1, {s: 1} if certified else {}, "fp2")
            elif kind == "cluster":
                self._mend_published_cluster(ref, s)
            else:
                self._mend_published_release(ref[0], s)
            added += 1
        for c, terms in sorted(diluting.items()):
            ref = (self.j, c)
            rows = least_dilution_rows(self.state, ref, sorted(terms), self.r_th, rounds_left)
            rows = rows or len(terms)
            self.perturber.add(c, rows, {}, "fp2")
            added += rows
        return added

    def _below_limit(self, c: int, s: str) -> bool:
        """Whether one more copy of s leaves cluster ``c``'s own share of s, the posterior of
        its rows before any overlap's evidence, under ``r_th`` times the published rate
        (formula 15). Past that an s-counterfeit puts every row of the cluster over r_th by
        itself (release 16 of the 20,000-row series: 61 copies in 122 rows, risk 30.9)."""
        cluster = self.state.releases[self.j].clusters[c]
        rate = self.state.releases[self.j].rates.get(s, 0.0)
        return (cluster.n_s(s) + 1) / (cluster.n + 1) < self.r_th * rate

    def _raising_lowers(self, ref: ClusterRef, s: str) -> bool:
        """Whether an s-counterfeit leaves the cluster's worst row for s lower than an
        s̄-counterfeit would (formula 12 over the cluster's cover, each added row outside
        every overlap, as the factory's counterfeits are).

        The two serve opposite rows of a pinned, certified cluster: its rows inside a
        certifying overlap have odds about ((N(C) - N(s, C)) / N(s, C)) / Π (N(O) - 1), which
        copies of s lower, while its rows outside every overlap carry the copies the
        overlaps cap (one each here) and have odds about N(s, C) / (N(C) - N(s, C)) ·
        exp(Σ N(O) / N(C)), which copies raise. Release 16 of the 20,000-row BMS-WebView-2
        series: one s-counterfeit per row over, whichever side it was on, took
        cluster c967 to 33 copies in 134 rows and its outside rows to risk 22; 6 to 12 copies
        hold both sides under r_th 8 (measured on the cluster as the repair left it)."""
        with_s = worst_posterior_with_row(self.state, ref, s, 1)
        return with_s < worst_posterior_with_row(self.state, ref, s, 0)

    def _certified(self, ref: ClusterRef, s: str) -> bool:
        """Whether a published cluster certifies copies of s in its overlap with cluster
        ``ref`` of the new release (its range's lower end r1 >= 1, formula 6: it lies so far
        inside the overlap that some of its copies must be there). Only then does an
        s-counterfeit lower the ratio of ``ref``'s rows; otherwise it raises their posterior
        with the cluster's share of s, and dilution is the remedy (release 13 of the same
        series: s-counterfeits on a pinned cluster without such an overlap took its rows to
        risk 96)."""
        for overlap in cluster_cover(self.state, ref):
            old = self.state.cluster(overlap.other)
            if s_range(old.n_s(s), old.n, overlap.size)[0] >= 1:
                return True
        return False

    def _mend_published_cluster(self, ref: ClusterRef, s: str) -> None:
        old = self.state.cluster(ref)
        best: tuple[int, int, bool] | None = None
        for overlap in cluster_cover(self.state, ref, releases=(self.j,)):
            c = overlap.other[1]
            new = self.state.cluster(overlap.other)
            f_old = s_range(old.n_s(s), old.n, overlap.size)
            f_new = s_range(new.n_s(s), new.n, overlap.size)
            if f_new[1] < f_old[1]:
                best = (overlap.size, c, True)
                break
            if f_new[0] > f_old[0] and (best is None or overlap.size > best[0]):
                best = (overlap.size, c, False)
            elif best is None:
                best = (overlap.size, c, False)
        if best is None:
            return
        _, c, with_s = best
        if with_s:
            self._raised.setdefault(s, set()).add(c)
        self.perturber.add(c, 1, {s: 1} if with_s else {}, "fp2")

    def _mend_published_release(self, k: int, s: str) -> None:
        new, old = self.state.releases[self.j], self.state.releases[k]
        o = self.state.overlap_size(self.j, k)
        f_new = s_range(new.total(s), new.n, o)
        f_old = s_range(old.total(s), old.n, o)
        with_s = f_new[1] < f_old[1]
        if with_s:
            self._raised.setdefault(s, set())
        self.perturber.add_global(1, {s: 1} if with_s else {}, "fp2")
        if with_s and new.rates.get(s, 0.0) == 0.0:
            # A term the new release did not hold has no published rate yet; give it the
            # rate its copies now imply so that formula 15 stays defined.
            new.rates[s] = new.total(s) / new.n

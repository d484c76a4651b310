"""Method parameters with their defaults (design.md §§1-9, docs/api.md ``params``)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, TypeVar

from app.core.errors import InvalidParameter
from app.core.methods import declared_params
from app.core.randomness import release_key

_P = TypeVar("_P")

__all__ = [
    "ANONY_HEADROOM",
    "COMMON",
    "GUARANTEE",
    "GUARANTEES",
    "SERIAL",
    "PublishParams",
    "parse_fields",
    "parse_params",
]

#: Parameters shared by the Anony family; each method declares which it reads
#: (:mod:`app.core.methods`, filled by :mod:`app.methods`), and the others are rejected so
#: that a typo is not ignored.
COMMON = ("r_th", "cluster_size", "seed")
#: Sanony's own: which guarantee, and what the default one withholds (design.md §5.8).
GUARANTEE = ("guarantee", "horizon", "min_copies", "level_margin", "reserve", "max_generalised")
SERIAL = (
    "anony_r_th",
    "max_repair_rounds",
    "backward",
    "global_lift",
    "counterfeits",
    "forward_perturbation",
    "counterfeit_counts",
    "align",
    "max_suppression",
    "suppression_floor",
    "suppression_scope",
    "max_dilution",
    "on_infeasible",
)

#: What a Sanony release promises (design.md §5.8): ``true_rows``, every row true and no count
#: above the true one, so the public files alone prove the risk; ``paper``, the paper's
#: counterfeits, whose guarantee holds only while they are not told apart (docs/attacks.md).
GUARANTEES = ("true_rows", "paper")

#: Default Anony threshold of Sanony/Kanony as a share of ``r_th``: the headroom lets a
#: published cluster absorb the lift of a later overlap without counterfeits (docs/methods.md).
ANONY_HEADROOM = 0.375


@dataclass(frozen=True, slots=True)
class PublishParams:
    """Every parameter of every method, with design.md's defaults.

    ``r_th`` risk-lift threshold (>= 1); ``guarantee`` what a Sanony release promises:
    ``true_rows`` (the default: no counterfeit, no count above the true one, so the public
    files alone prove every row within ``r_th``; design.md §5.8) or ``paper`` (the paper's
    counterfeits, safe only while they are not told apart, docs/attacks.md); under
    ``true_rows``, ``horizon`` the releases the series is expected to run (20), from which
    ``min_copies`` (``None``: :attr:`admission`) sets the fewest copies with which a private
    term enters the series (fewer are suppressed: a term first published with a few copies is
    the one most likely to fall away later, which lifts the earlier release's rows; a longer
    series asks for steadier terms), ``level_margin`` the steady level (``None``:
    :attr:`steady_margin` from the ``horizon``, 3 for twenty releases; ``0``: none): a term
    enters with at most ``(true - level_margin * sqrt(true)) / overlap`` copies, overlap the
    share of a release that its overlap with the next is expected to hold, and no later
    release publishes more than that level (more only where the overlap leaves room), so that
    a later fall is a small fall under the level and not one under a high first count
    (design.md §5.8, "A steady level"), and ``reserve`` the
    share of ``r_th`` the new release's own rows keep free where a safe count allows it
    (their risk at most ``r_th / reserve``, so that a later release whose count falls has room
    to lift them), and ``max_generalised`` the share of the new release's rows whose public
    terms may be suppressed to take them out of an earlier release's overlap when a term's
    count fell too far under that release's (design.md §5.8, "When a term is pinned");
    ``anony_r_th`` the threshold Sanony's Anony step
    sanitises to (``None``: ``ANONY_HEADROOM * r_th``, at least 1; lower keeps more copies in
    the global bag, so overlaps have less to reveal and fewer counterfeits are needed);
    ``backward`` BP on the pairs whose rows the new release puts over ``r_th``
    (``where_needed``) or Lemma 4 on every overlap (``every_overlap``, the paper);
    ``global_lift`` the copies BP where needed adds for the global composition: the least that
    keeps every row within ``r_th`` (``least``, the default) or Lemma 4's on whole releases
    (``lemma4``, a count never falls; docs/methods.md);
    ``counterfeits`` how counterfeit rows are drawn: ``blend`` (the default) repeats a true row
    of the cluster that lies outside every overlap where there is one, else draws a fresh
    row, so that counterfeits are as rare across the series as true rows are; ``fresh``
    always draws a set no release holds (Definition 14 taken literally; docs/methods.md);
    ``forward_perturbation`` runs FP1 (off by default, docs/methods.md);
    ``counterfeit_counts`` where the counterfeit rows are counted in public: ``cluster`` (the
    default) has each cluster publish BP + FP1's rows beside the release's total of every
    counterfeit row; ``release`` publishes the total only (every cluster 0), which
    an adversary who weighs hypotheses of which rows are counterfeits cannot aim by cluster;
    ``paper`` publishes the clusters' counts only, FP2's and the repair's rows in no public
    figure (the paper's section 3.2: on a long series the total tells that adversary how much
    dilution to undo; docs/attacks.md); ``align`` gives the
    copies that a new cluster's published cover would expose, and those of clusters of one
    repeated set, to the global bag before BP (docs/methods.md); ``max_suppression``
    the share of a release's private copies that may be suppressed as the last resort, and
    ``suppression_floor`` the copies that may be suppressed whatever that share (a small
    release's 1% is 0 or 1 copy, less than one new private term needs: docs/methods.md);
    ``suppression_scope`` what ``max_suppression`` is a share of: the new release's private
    copies (``release``, design.md §5.5's reading) or, the default, the larger of that and the
    share of the series so far, this release included, less what the earlier releases suppressed
    (``series``: a release that meets many new and rising terms may use what quieter releases
    left; docs/lab/sanony.md, "Suppression budget");
    ``max_dilution`` the most rows without a term, as a share of the new release's true rows,
    that the repair adds in all for terms pinned between whole releases (fewer copies put a
    published release's rows over ``r_th``, these copies the new release's own; design.md §5.5);
    ``on_infeasible`` what happens when the repair and the suppression budget leave rows over
    ``r_th``: ``escalate`` (the default) builds the release again with coarser clusters, then
    suppresses beyond the budget, and reports each step (``escalation``); ``refuse`` refuses
    the publication (docs/lab/sanony.md, "When a release cannot be made safe");
    ``cluster_size`` minimum cluster size for the built-in clustering; ``seed`` a
    publisher-given seed for every random choice, for tests and benchmarks only (``None``, the
    default: a secret drawn per release, ``secret``, set by the caller and kept in the private
    ledger, never a parameter a request may give; :mod:`app.core.randomness`);
    ``max_repair_rounds`` guard of the Sanony post-condition loop; Wong's ``l``,
    ``strategy``, ``k_prime``, ``alpha``; Kanony's ``taxonomy``, ``gb_min_terms``,
    ``gb_retention``; sComp's ``d``, ``confidence``, ``other_releases``; Inv's ``m``.
    """

    r_th: float = 8.0
    guarantee: str = "true_rows"
    horizon: int = 20
    min_copies: int | None = None
    level_margin: float | None = None
    reserve: float = 2.0
    max_generalised: float = 0.5
    anony_r_th: float | None = None
    backward: str = "where_needed"
    global_lift: str = "least"
    counterfeits: str = "blend"
    forward_perturbation: bool = False
    counterfeit_counts: str = "cluster"
    align: bool = True
    max_suppression: float = 0.01
    suppression_floor: int = 3
    suppression_scope: str = "series"
    max_dilution: float = 0.1
    on_infeasible: str = "escalate"
    cluster_size: int = 10
    seed: int | None = None
    max_repair_rounds: int = 200
    l: int = 2  # noqa: E741 - the paper's symbol
    strategy: str = "constant_ratio"
    k_prime: int = 5
    alpha: float = 2.0
    taxonomy: Mapping[str, str] = field(default_factory=dict)
    gb_min_terms: int = 2
    gb_retention: int | None = None
    d: int = 4
    confidence: float = 0.8
    other_releases: int = 1
    m: int = 2
    secret: str | None = None

    @property
    def admission(self) -> int:
        """The fewest copies with which a private term enters a ``true_rows`` series:
        ``min_copies``, else from the ``horizon`` (design.md §5.8): ``max(5, horizon)``, as
        many copies as releases, 20 for twenty. Measured on the 20 x 20,000 SeGen series of
        BMS-WebView-2 (r_th 8, seeds 1-3; docs/lab/long-series-true-rows.md): with 20 every
        release of the three series published and none needed decoupling; with 15 (the
        earlier ``0.75 × horizon``) 1, 5 and 5 releases of 20 were refused and 1-3 others
        escalated to decoupling (up to 15,306 of their 20,000 rows generalised), for 4.8-5.7
        points fewer private copies suppressed (about 9.5% of the true copies against 15%).
        A term admitted with a few copies is the one that falls away later, and the global
        composition then lifts the earlier release's rows outside the overlap.

        >>> PublishParams().admission, PublishParams(horizon=5).admission
        (20, 5)
        """
        if self.min_copies is not None:
            return self.min_copies
        return max(5, self.horizon)

    @property
    def steady_margin(self) -> float | None:
        """The steady level's margin, in spreads of a count (design.md §5.8, "A steady
        level"): ``level_margin``, else from the ``horizon``: ``3 sqrt(ln horizon / ln 20)``,
        3 for twenty releases. The level hedges against the lowest count of the releases to
        come, which lies about ``sqrt(2 ln h)`` spreads under the mean of ``h`` of them; 3 was
        measured at twenty (docs/lab/long-series-true-rows.md, "a steady level": 1 and 1.5
        left releases that decoupling or a refusal had to mend on 20 x 20,000 rows, 2 refused
        release 13 of twenty releases of 1,000,000 rows, 3 none). ``0``: no level
        (``None`` here), each release up to its true count.

        >>> PublishParams().steady_margin, round(PublishParams(horizon=3).steady_margin, 2)
        (3.0, 1.82)
        >>> PublishParams(horizon=1).steady_margin, PublishParams(level_margin=0).steady_margin
        (None, None)
        """
        if self.level_margin is not None:
            return self.level_margin or None
        # One release has none to come: no level.
        return 3 * math.sqrt(math.log(self.horizon) / math.log(20)) or None

    @property
    def anony_threshold(self) -> float:
        """The threshold Sanony's Anony step sanitises to: ``r_th`` under the ``true_rows``
        guarantee (its holding clusters are overlapped by no release, design.md §5.8), else
        :data:`ANONY_HEADROOM` of it."""
        if self.anony_r_th is not None:
            return self.anony_r_th
        if self.guarantee == "true_rows":
            return self.r_th
        return max(1.0, ANONY_HEADROOM * self.r_th)

    def randomness_key(self, release_no: int) -> str:
        """The key of release ``release_no``'s random choices (:func:`release_key`)."""
        return release_key(self.seed, self.secret, release_no)

    def for_method(self, method: str) -> dict[str, Any]:
        """The effective values of the parameters ``method`` reads (echoed by the API)."""
        return self.select(declared_params(method))

    def select(self, names: Sequence[str]) -> dict[str, Any]:
        """The effective values of ``names``."""
        values = asdict(self)
        return {name: values[name] for name in names}


def _check(name: str, ok: bool, why: str) -> None:
    if not ok:
        raise InvalidParameter(f"params.{name}: {why}", {"param": name})


def parse_params(method: str, raw: Mapping[str, Any] | None) -> PublishParams:
    """Validate ``raw`` for the Anony-family ``method`` and return the effective parameters.

    >>> parse_params("sanony", {"r_th": 2}).r_th
    2.0
    """
    declared = declared_params(method)
    params: PublishParams = parse_fields(PublishParams, method, declared, raw)
    if "guarantee" not in declared:
        # A method without the choice (Kanony) runs the paper's mechanism.
        params = replace(params, guarantee="paper")
    _validate(params)
    return params


def parse_fields(
    cls: type[_P], method: str, allowed: Sequence[str], raw: Mapping[str, Any] | None
) -> _P:
    """``cls`` (a dataclass of defaults) with the values of ``raw``, type-checked by field.

    Names outside ``allowed`` are rejected; range checks are the caller's (or ``cls``'s own
    ``__post_init__``).
    """
    raw = dict(raw or {})
    unknown = sorted(set(raw) - set(allowed))
    _check(
        unknown[0] if unknown else "",
        not unknown,
        f"not a parameter of {method}; it takes {', '.join(allowed)}",
    )
    types = {f.name: str(f.type) for f in fields(cls)}  # type: ignore[arg-type]
    values = {name: _coerce(name, types[name], value) for name, value in raw.items()}
    return replace(cls(), **values)  # type: ignore[type-var]


def _coerce(name: str, type_name: str, value: Any) -> Any:
    if value is None and "None" in type_name:
        return None
    if type_name == "bool":
        _check(name, isinstance(value, bool), "must be true or false")
        return value
    if type_name.startswith("int"):
        _check(name, isinstance(value, int) and not isinstance(value, bool), "must be an integer")
        return value
    if type_name.startswith("float"):
        _check(
            name,
            isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value),
            "must be a finite number",
        )
        return float(value)
    if "Mapping" not in type_name:  # str, or a Literal alias checked by the dataclass
        _check(name, isinstance(value, str), "must be a string")
        return value
    _check(
        name,
        isinstance(value, Mapping)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()),
        "must be an object mapping terms to categories",
    )
    return dict(value)


def _validate(p: PublishParams) -> None:
    _check("r_th", p.r_th >= 1, "must be at least 1")
    _check("guarantee", p.guarantee in GUARANTEES, "must be 'true_rows' or 'paper'")
    _check("horizon", 1 <= p.horizon <= 1000, "must be between 1 and 1000")
    _check(
        "min_copies",
        p.min_copies is None or 0 <= p.min_copies <= 10**6,
        "must be between 0 and 1000000, or null",
    )
    _check(
        "level_margin",
        p.level_margin is None or 0 <= p.level_margin <= 100,
        "must be between 0 and 100 (0: no level), or null (from the horizon)",
    )
    _check("reserve", 1 <= p.reserve <= 1000, "must be between 1 and 1000")
    _check("max_generalised", 0 <= p.max_generalised <= 1, "must be between 0 and 1")
    _check(
        "anony_r_th",
        p.anony_r_th is None or 1 <= p.anony_r_th <= p.r_th,
        "must be between 1 and r_th, or null",
    )
    _check(
        "backward",
        p.backward in ("where_needed", "every_overlap"),
        "must be 'where_needed' or 'every_overlap'",
    )
    _check("global_lift", p.global_lift in ("least", "lemma4"), "must be 'least' or 'lemma4'")
    _check("counterfeits", p.counterfeits in ("blend", "fresh"), "must be 'blend' or 'fresh'")
    _check(
        "counterfeit_counts",
        p.counterfeit_counts in ("cluster", "release", "paper"),
        "must be 'cluster', 'release' or 'paper'",
    )
    _check(
        "forward_perturbation",
        not (p.forward_perturbation and p.counterfeit_counts == "release"),
        "FP1 protects the counts each cluster publishes (Lemma 5); with counterfeit_counts "
        "'release' the clusters publish none, and FP1 would only add counterfeit rows",
    )
    _check("max_suppression", 0 <= p.max_suppression <= 1, "must be between 0 and 1")
    _check("suppression_floor", 0 <= p.suppression_floor <= 10**6, "must be between 0 and 1000000")
    _check(
        "suppression_scope",
        p.suppression_scope in ("release", "series"),
        "must be 'release' or 'series'",
    )
    _check("max_dilution", 0 <= p.max_dilution <= 1, "must be between 0 and 1")
    _check(
        "on_infeasible",
        p.on_infeasible in ("escalate", "refuse"),
        "must be 'escalate' or 'refuse'",
    )
    _check("cluster_size", 1 <= p.cluster_size <= 100_000, "must be between 1 and 100000")
    _check(
        "seed",
        p.seed is None or 0 <= p.seed < 2**63,
        "must be a non-negative 63-bit integer or null",
    )
    _check("max_repair_rounds", 1 <= p.max_repair_rounds <= 100_000, "must be between 1 and 100000")
    _check("l", p.l >= 2, "must be at least 2")
    _check(
        "strategy",
        p.strategy in ("constant_ratio", "geometric"),
        "must be 'constant_ratio' or 'geometric'",
    )
    _check("k_prime", p.k_prime >= 1, "must be at least 1")
    _check("alpha", p.alpha > 1, "must be greater than 1 (Theorem 2)")
    _check("gb_min_terms", p.gb_min_terms >= 0, "must be non-negative")
    _check(
        "gb_retention", p.gb_retention is None or p.gb_retention >= 1, "must be at least 1 or null"
    )
    _check("d", p.d >= 1, "must be at least 1")
    _check("confidence", 0 < p.confidence < 1, "must be strictly between 0 and 1")
    _check("other_releases", p.other_releases >= 1, "must be at least 1")
    _check("m", p.m >= 2, "must be at least 2")

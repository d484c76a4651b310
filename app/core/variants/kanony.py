"""Kanony: Sanony plus categorisation and global-bag invariance (SPEC 7; Shaukat et al. 2022).

Two attacks of ``papers/kanony-shaukat-2022.txt`` that Sanony leaves open:

- **Correlation attack** (section 4.3, Table 8): a non-private term that is itself a strong
  hint of a private one (``smoking`` for ``lung cancer``). Non-private terms found in the
  series' *taxonomy* are replaced by their category before clustering (Algorithm 1), so the
  published rows carry ``misdemeanor`` rather than ``smoking``.
- **Critical absence** (Definition 10, Lemmas 1-2, Tables 5 and 6): the global bag's distinct
  terms are a signature of the release. When a record whose private term sat in the bag is
  deleted, the term leaves the next bag, and an adversary who knows who left learns that
  person's term (``risk = n_breach / n_total = 1``, formula 4). Kanony keeps the bag's
  signature *m-invariant* over the releases (section 4.4): every term of an earlier bag is
  still in the new one, as a counterfeit copy when no true copy is left (Algorithm 2), and
  the bag holds at least ``gb_min_terms`` distinct terms (m-uniqueness in the bag), padded with
  counterfeit copies of private terms already used in the release (Definition 12).

Decisions (the paper sketches both steps; SPEC 7 makes them precise):

- The bag step runs after BP and FP1 (the paper adds the bag counterfeits once "all
  transactions remain serially protected", section 4.2) and before the population rates are
  fixed, so its copies count in the published ``ss(s, T^μ)``; FP2 and Sanony's checked
  post-condition then judge every row of the series with them.
- A bag counterfeit is a copy of s in the global bag with no counterfeit row: the copy stands
  for "some transaction of the release holds s" (the paper's probability ``1/x``, section
  4.4). The release publishes how many copies are counterfeits (``global_counterfeits``), the
  ledger which terms (``global_bag_counterfeits``).
- ``gb_retention = r`` keeps a term for ``r`` releases after the last release whose bag held a
  copy of it that was not a Kanony counterfeit (true copies and Sanony's own BP/repair copies
  count). Counting from any copy would keep every term forever, since the bag counterfeits of
  release k are themselves a copy in release k. ``None`` (default) keeps every term of every
  earlier bag.
- Padding draws, without repeats and with probability proportional to the term's copies, from
  the private terms the release holds but the bag lacks (Definition 12); when those run out,
  from the terms of earlier releases of the series. A shortfall (the series has no more
  private terms) is reported, not an error.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from app.core.errors import InvalidParameter
from app.core.history import SeriesHistory
from app.core.model import Publication, Transaction
from app.core.params import PublishParams
from app.core.perturbation.sanony import publish_sanony
from app.core.progress import ProgressCallback
from app.core.randomness import mechanism_random
from app.core.risk.state import ReleaseState
from app.core.validation import MAX_TERM_LENGTH

__all__ = [
    "BagCounterfeits",
    "categorise",
    "global_bag_counterfeits",
    "publish_kanony",
    "retained_terms",
]


def categorise(
    corpus: Sequence[Transaction], taxonomy: Mapping[str, str], private_terms: frozenset[str]
) -> list[Transaction]:
    """Replace each non-private term found in ``taxonomy`` by its category (Algorithm 1).

    Private terms are never replaced. A category that is a private term is refused: the row
    would then carry a private term in its non-private set.

    >>> [sorted(t.terms) for t in categorise(
    ...     [Transaction.of({"smoking", "theft", "HIV"})],
    ...     {"smoking": "misdemeanor", "HIV": "virus"},
    ...     frozenset({"HIV"}),
    ... )]
    [['HIV', 'misdemeanor', 'theft']]
    """
    _check_taxonomy(taxonomy, private_terms)
    if not taxonomy:
        return list(corpus)
    return [
        Transaction(
            frozenset(t if t in private_terms else taxonomy.get(t, t) for t in tr.terms),
            tr.individual,
            tr.cluster,
        )
        for tr in corpus
    ]


def _check_taxonomy(taxonomy: Mapping[str, str], private_terms: frozenset[str]) -> None:
    for term, category in sorted(taxonomy.items()):
        if term in private_terms:
            continue
        if not category.strip() or len(category) > MAX_TERM_LENGTH:
            raise InvalidParameter(
                f"params.taxonomy: the category of {term!r} must be a non-blank term of at most "
                f"{MAX_TERM_LENGTH} characters",
                {"param": "taxonomy", "term": term},
            )
        if category in private_terms:
            raise InvalidParameter(
                f"params.taxonomy: the category {category!r} of {term!r} is a private term",
                {"param": "taxonomy", "term": term},
            )


def retained_terms(history: SeriesHistory, retention: int | None) -> set[str]:
    """Terms of earlier global bags that the new bag must hold (global-bag invariance).

    ``retention=None``: every term of every earlier bag. ``retention=r``: the terms that one
    of the last ``r`` bags held other than as Kanony counterfeits only (the ledger's
    ``global_bag_counterfeits``; a release without a ledger counts all its copies).
    """
    if retention is None:
        return {s for release in history.releases for s, k in release.global_bag.items() if k}
    required: set[str] = set()
    first = max(len(history.releases) - retention, 0)
    for position in range(first, len(history.releases)):
        bag = history.releases[position].global_bag
        fake: Mapping[str, int] = {}
        if position < len(history.ledgers):
            fake = history.ledgers[position].global_bag_counterfeits
        required.update(s for s, k in bag.items() if k - fake.get(s, 0) > 0)
    return required


@dataclass(slots=True)
class BagCounterfeits:
    """What the invariance step adds to a global bag: one copy per term, and any shortfall."""

    retained: dict[str, int] = field(default_factory=dict)
    padded: dict[str, int] = field(default_factory=dict)
    shortfall: int = 0

    @property
    def copies(self) -> dict[str, int]:
        """Every counterfeit copy by term (``ReleaseLedger.global_bag_counterfeits``)."""
        return dict(sorted((Counter(self.retained) + Counter(self.padded)).items()))


def global_bag_counterfeits(
    bag: Mapping[str, int],
    used: Mapping[str, int],
    required: set[str],
    min_terms: int,
    earlier: Mapping[str, int],
    seed: int | str,
) -> BagCounterfeits:
    """Counterfeit copies that make a global bag invariant and diverse (SPEC 7).

    Parameters
    ----------
    bag:
        The release's global bag ``C_g`` (term -> copies) after BP and FP1.
    used:
        Copies of each private term in the release (cluster segments plus bag).
    required:
        Terms of earlier bags the bag must hold (:func:`retained_terms`); each one absent gets
        one counterfeit copy (critical absence, Definition 10; Algorithm 2).
    min_terms:
        ``gb_min_terms``: distinct terms the bag must hold; padding draws from ``used`` terms
        the bag lacks (Definition 12), then from ``earlier`` (copies in earlier releases).
    seed:
        Seeds the padding draw.

    >>> global_bag_counterfeits({"COVID-19": 1}, {"COVID-19": 1, "HIV": 2},
    ...                         {"herpes", "COVID-19"}, 2, {}, 0).copies
    {'herpes': 1}
    """
    held = {s for s, k in bag.items() if k}
    result = BagCounterfeits(retained=dict.fromkeys(sorted(required - held), 1))
    held |= required
    missing = max(min_terms - len(held), 0)
    rng = mechanism_random(str(seed), "kanony-bag")
    for pool in (used, earlier):
        if not missing:
            break
        candidates = {s: k for s, k in pool.items() if k > 0 and s not in held}
        for s in _weighted_sample(candidates, missing, rng):
            result.padded[s] = 1
            held.add(s)
            missing -= 1
    result.shortfall = missing
    return result


def _weighted_sample(weights: Mapping[str, int], count: int, rng: random.Random) -> list[str]:
    """``count`` distinct keys drawn with probability proportional to their weight
    (Efraimidis-Spirakis keys ``u^(1/w)``), in a seeded, deterministic way."""
    keyed = sorted(((rng.random() ** (1.0 / weights[s]), s) for s in sorted(weights)), reverse=True)
    return [s for _, s in keyed[:count]]


def _earlier_terms(history: SeriesHistory) -> Counter[str]:
    totals: Counter[str] = Counter()
    for release in history.releases:
        totals.update(release.term_totals())
    return totals


def publish_kanony(
    history: SeriesHistory,
    corpus: Sequence[Transaction],
    private_terms: frozenset[str],
    params: PublishParams,
    progress: ProgressCallback | None = None,
) -> Publication:
    """Publish ``corpus`` with Kanony: categorisation, Sanony, global-bag invariance (SPEC 7).

    The published release keeps Sanony's guarantee (every row of the series serially
    preserving, Theorem 1, checked) and adds: rows carry categories of ``params.taxonomy``;
    the global bag holds every term of the earlier bags (``gb_retention``) and at least
    ``gb_min_terms`` distinct terms. ``release.global_counterfeits`` is the number of bag
    counterfeit copies; ``ledger.global_bag_counterfeits`` says which terms.
    """
    categorised = categorise(corpus, params.taxonomy, private_terms)
    required = retained_terms(history, params.gb_retention)
    earlier = _earlier_terms(history)
    seed = params.randomness_key(history.next_release_no)
    added = BagCounterfeits()
    keep: dict[str, int] = {}

    def invariance(release: ReleaseState) -> Mapping[str, object]:
        nonlocal added
        added = global_bag_counterfeits(
            release.global_bag, release.totals(), required, params.gb_min_terms, earlier, seed
        )
        release.global_bag.update(added.copies)
        # The bag's promise (SPEC 7) binds the suppression of the post-condition, which
        # mends global-composition lifts first: it may not take the last bag copy of a term
        # retained or padded here, nor bring the bag under gb_min_terms terms (the terms with
        # most copies are kept for that: their last copy is the least likely to be wanted).
        bag = release.global_bag
        kept = {s for s in bag if bag[s] and (s in required or s in added.copies)}
        others = sorted((s for s in bag if bag[s] and s not in kept), key=lambda s: (-bag[s], s))
        kept.update(others[: max(params.gb_min_terms - len(kept), 0)])
        keep.update((s, 1) for s in kept)
        return {
            "global_bag_counterfeits": sum(added.copies.values()),
            "global_bag_retained": len(added.retained),
            "global_bag_padded": len(added.padded),
            "global_bag_shortfall": added.shortfall,
        }

    publication = publish_sanony(
        history,
        categorised,
        private_terms,
        params,
        progress,
        before_rates=invariance,
        keep_in_bag=keep,
    )
    copies = added.copies
    publication.release.global_counterfeits = sum(copies.values())
    publication.ledger.global_bag_counterfeits = copies
    publication.report["method"] = "kanony"
    publication.report["categorised_terms"] = sum(
        1 for t in {t for tr in corpus for t in tr.terms} - private_terms if t in params.taxonomy
    )
    return publication

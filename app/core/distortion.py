"""What a release does to the counts analysts read, counted in copies.

The counterfeit *rate* counts rows; an analyst meets the mechanism in copies of a private term:
how many rows of the release hold s, cluster segments plus global bag (``N(s)`` of the whole
release, section 2.3.2), against how many rows of the raw snapshot do. The publisher knows
both while the snapshot exists, so the figure goes in the job's report (never in the public
release, which must not print true counts).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from app.core.model import PublishedRelease, Transaction

__all__ = ["OFF_COPIES", "OFF_SHARE", "copy_distortion", "true_copies"]

#: A term is *off* when its published count is more than this many copies away from the
#: true count, and by more than :data:`OFF_SHARE` of it (max(3 copies, 20%)).
OFF_COPIES = 3
OFF_SHARE = 0.2


def true_copies(corpus: Sequence[Transaction], private_terms: frozenset[str]) -> Counter[str]:
    """Rows of the raw snapshot that hold each private term.

    >>> from app.core.model import Transaction
    >>> sorted(true_copies([Transaction.of(["HIV", "a"]), Transaction.of(["a"])],
    ...                    frozenset({"HIV"})).items())
    [('HIV', 1)]
    """
    # Counted per distinct set of terms (snapshots repeat rows: a million BMS-WebView-2
    # lines hold 77,512 distinct ones), then spread over its private terms.
    counts: Counter[str] = Counter()
    for terms, rows in Counter(t.terms for t in corpus).items():
        for s in terms & private_terms:
            counts[s] += rows
    return counts


def copy_distortion(
    true: Mapping[str, int], release: PublishedRelease, worst: int = 5
) -> dict[str, object]:
    """Private copies published against true, for the job's report.

    ``distortion`` is ``Σ_s |published(s) − true(s)| / Σ_s true(s)`` (L1 over the private
    terms); ``net`` the signed total (``+`` inflated); ``terms_off`` the terms off by more than
    ``max(OFF_COPIES, OFF_SHARE × true)``; ``worst`` the terms furthest off, in copies.

    >>> from app.core.model import release_from_counts
    >>> release = release_from_counts(1, [([("a",), ("b",)], {"HIV": 1}, {}, 0)], {"HIV": 1}, {})
    >>> copy_distortion({"HIV": 1}, release)["distortion"]
    1.0
    """
    published = release.term_totals()
    terms = sorted(set(true) | set(published))
    total = sum(true.values())
    gaps = {s: published.get(s, 0) - true.get(s, 0) for s in terms}
    off = [s for s in terms if abs(gaps[s]) > max(OFF_COPIES, OFF_SHARE * true.get(s, 0))]
    ranked = sorted((s for s in terms if gaps[s]), key=lambda s: (-abs(gaps[s]), s))
    return {
        "true": total,
        "published": sum(published.values()),
        "distortion": round(sum(abs(g) for g in gaps.values()) / total, 6) if total else 0.0,
        "net": round(sum(gaps.values()) / total, 6) if total else 0.0,
        "terms_off": len(off),
        "worst": [
            {"term": s, "true": true.get(s, 0), "published": published.get(s, 0)}
            for s in ranked[:worst]
        ],
    }

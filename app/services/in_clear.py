"""Private terms that earlier releases of a series printed in clear.

Private terms may grow with a release (docs/api.md, ``private_terms`` of a POST). The releases
before it published the term in their rows, as any other non-private term: those rows are
public and stay so. From that release on the core prints it in no row (the counterfeit rows,
which copy terms from earlier releases, included); the service tells the publisher and
auditors what was printed before: a warning when a release makes the term private
(:func:`published_earlier_warnings`) and, per release, the series' risk summaries
(:func:`rows_in_clear`).

A spelling counts as the term when the series matches spellings (``private_match =
"casefold"``: ``hiv`` is ``HIV``), exactly as a new release's corpus is matched
(:class:`app.io.terms.PrivateMatcher`). Rows are what count: a method with its own layout
(disassociation's chunks) publishes every term alike, private or not, by design.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from app.core.errors import WarningCode
from app.core.model import PublishedRelease
from app.io.terms import PrivateMatch, PrivateMatcher

__all__ = ["PUBLISHED_EARLIER", "printed_in_clear", "published_earlier_warnings", "rows_in_clear"]

#: The warning's code (``PublishResult.warnings``, the job's report and ``warnings``).
PUBLISHED_EARLIER = WarningCode.PRIVATE_TERM_PUBLISHED_EARLIER


def rows_in_clear(
    release: PublishedRelease, private_terms: frozenset[str], mode: PrivateMatch
) -> dict[str, int]:
    """Per private term (of ``private_terms``, in any spelling ``mode`` matches), the rows of
    ``release`` that print it in clear; terms in none are left out.

    Only terms that were not private for that release are looked for: a release's own
    private terms were split from its rows (and, under casefold, their spellings too).
    """
    candidates = private_terms - release.private_terms
    if not candidates or not release.clusters:
        return {}
    vocabulary = sorted({t for cluster in release.clusters for row in cluster.rows for t in row})
    spelled, _ = PrivateMatcher(candidates, mode).remap(vocabulary)
    names = {t: s for t, s in zip(vocabulary, spelled, strict=True) if s in candidates}
    if not names:
        return {}
    found: Counter[str] = Counter()
    for cluster in release.clusters:
        for row in cluster.rows:
            found.update({names[t] for t in row if t in names})
    return dict(sorted(found.items()))


def printed_in_clear(
    releases: Sequence[PublishedRelease], private_terms: frozenset[str], mode: PrivateMatch
) -> dict[str, dict[int, int]]:
    """Per private term printed in clear: release number -> rows that print it."""
    found: dict[str, dict[int, int]] = {}
    for release in releases:
        for term, rows in rows_in_clear(release, private_terms, mode).items():
            found.setdefault(term, {})[release.release_no] = rows
    return dict(sorted(found.items()))


def published_earlier_warnings(
    releases: Sequence[PublishedRelease], private_terms: frozenset[str], mode: PrivateMatch
) -> list[dict[str, str]]:
    """Warnings for the terms the new release makes private (not private in the latest of
    ``releases``) that earlier releases printed in clear: which releases, how many rows.

    Only when the term becomes private, not at every later release: the series' risk
    summaries keep saying it (``private_terms_in_clear``).
    """
    if not releases:
        return []
    newly = private_terms - releases[-1].private_terms
    warnings = []
    for term, by_release in printed_in_clear(releases, newly, mode).items():
        numbers = ", ".join(str(no) for no in sorted(by_release))
        rows = sum(by_release.values())
        warnings.append(
            {
                "code": PUBLISHED_EARLIER,
                "term": term,
                "releases": ",".join(str(no) for no in sorted(by_release)),
                "rows": str(rows),
                "message": (
                    f"{term!r} is private from this release on, but release(s) {numbers} "
                    f"published it in clear in {rows} row(s) before it was; this release and "
                    "later ones print it in no row, and what was published stays public"
                ),
            }
        )
    return warnings

"""A private term's published count over a series, with the interval an analyst's reader
gives the true count (``app.analysis``, docs/analysis.md), and the analyst's export of a
release (``serialpub export --format supports``).

Read from the public files (:mod:`app.services.public_files`), as ``load_series`` reads them
from the API: the figures are the analyst's own. ``app.analysis`` needs pandas, imported
when a count is first asked for, not by every process that serves the API.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING

import orjson

from app.db.engine import Database
from app.db.models import Series
from app.errors import NotFound
from app.schemas.overview import TermCount
from app.services.public_files import document_bytes, release_documents

if TYPE_CHECKING:
    from app.analysis.reader import Release

__all__ = ["clear_counts_cache", "series_counts", "supports_csv"]

#: Per (series, the etags of its releases): every private term's counts. A release's bytes
#: never change, so the key changes only when a release is published.
_COUNTS: OrderedDict[tuple[int, tuple[str, ...]], dict[str, list[TermCount]]] = OrderedDict()
_CACHED = 32


def clear_counts_cache() -> None:
    _COUNTS.clear()


def _with_history(releases: Sequence[Release]) -> list[Release]:
    """Each release told the private copies its earlier releases published, as
    ``app.analysis.load_series`` tells a whole series (the series-wide suppression budget
    depends on them)."""
    out, earlier = [], 0
    for release in sorted(releases, key=lambda r: r.release_no):
        out.append(dataclasses.replace(release, earlier_private_copies=earlier))
        earlier += release.private_copies()
    return out


async def _analyst_releases(db: Database, series: Series, upto: int) -> list[Release]:
    from app.analysis.reader import UnsupportedRelease, parse_release

    parsed = []
    for document in await release_documents(db, series, upto):
        try:
            release = parse_release(orjson.loads(await document_bytes(db, document)))
        except UnsupportedRelease as exc:
            raise NotFound(str(exc), {"series": series.name}) from None
        parsed.append(release)
    return _with_history(parsed)


def _count(release: Release, term: str) -> TermCount:
    from app.analysis.estimates import term_count

    estimate = term_count(release, term)
    return TermCount(
        release_no=release.release_no,
        label=release.label,
        published=int(estimate.published),
        low=estimate.low,
        high=None if math.isinf(estimate.high) else estimate.high,
        counterfeits=estimate.counterfeits,
        suppression=None if math.isinf(estimate.suppression) else estimate.suppression,
        counterfeits_complete=estimate.counterfeits_complete,
    )


async def series_counts(
    db: Database, series: Series, n_releases: int
) -> dict[str, list[TermCount]]:
    """Every private term of the series (those of its releases too) with its count in each
    release, oldest first; 404 for a series that publishes chunks, not rows."""
    documents = await release_documents(db, series, n_releases)
    key = (series.id, tuple(d.meta.etag for d in documents))
    found = _COUNTS.get(key)
    if found is None:
        releases = await _analyst_releases(db, series, n_releases)
        terms = sorted(set(series.private_terms).union(*(r.private_terms for r in releases)))
        found = await asyncio.to_thread(
            lambda: {t: [_count(r, t) for r in releases] for t in terms}
        )
        _COUNTS[key] = found
        while len(_COUNTS) > _CACHED:
            _COUNTS.popitem(last=False)
    _COUNTS.move_to_end(key)
    return found


async def supports_csv(db: Database, series: Series, release_no: int) -> str:
    """``serialpub export --format supports --release N`` of the series: the CSV of expected
    supports with their intervals (the command's defaults: min support 1, private pairs)."""
    from app.analysis.estimates import supports_table
    from app.analysis.export import to_csv

    releases = await _analyst_releases(db, series, release_no)
    table = await asyncio.to_thread(supports_table, [releases[-1]])
    return to_csv(table)

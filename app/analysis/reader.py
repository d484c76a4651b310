"""Read public releases the way an analyst gets them: a file, a directory or the API.

A release's public JSON (docs/api.md, ``GET /v1/series/{name}/releases/{no}``; ``serialpub
publish-local --out DIR`` writes the same as ``DIR/release-001.json``, ...) publishes per
cluster ``C*`` its rows (the non-private term sets of its records, counterfeit rows included
and indistinguishable), ``private_terms`` (``N(s, C_c)``, the copies of s in its private
segment) and ``global_share`` (``N(s, C_ol) = J_s(C)``, its estimated share of the global
bag). ``N(s, C*) = N(s, C_c) + N(s, C_ol)`` copies of s belong to the ``N(C*)`` rows of the
cluster, at most one a row (Sanony paper, Definition 4).

A release says what its counts may differ from the raw data by in ``guarantee``
(:data:`GUARANTEES`, app/core/guarantees.py): ``"paper"`` and ``"m_invariance"``
(counterfeit rows, each counted in ``counterfeit_rows``, and suppression within a published
budget); ``"true_rows"`` (no counterfeit row: every published row is a record; suppression may
have removed copies of private terms and generalisation public terms of some rows, so a
published count or support is at most the true one, never above); ``"wong"`` (no counterfeit;
copies of private terms suppressed where no group could hold them); ``"none"`` (each release
alone: its rows and copies as Anony leaves them). A release without the field is
``"paper"``.

Only row-publishing methods are read. Disassociation publishes chunks, not rows: its
releases are refused with :class:`UnsupportedRelease`.

This module reads JSON and nothing else of the service (no database, no API code).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = [
    "GUARANTEES",
    "Cluster",
    "Release",
    "UnsupportedRelease",
    "global_bag_table",
    "load_api",
    "load_release",
    "load_series",
    "parse_release",
    "private_table",
    "rows_table",
]

#: Release-level names under which a complete count of counterfeit rows may be published
#: (every release publishes ``counterfeit_rows`` since 0.2.0; before it, the per-cluster
#: ``counterfeits`` counted only BP and FP1's rows).
RELEASE_COUNTERFEIT_FIELDS = ("counterfeit_rows", "counterfeits_total", "counterfeits")

#: The values of a release's ``guarantee`` (the module's docstring); the first is the default.
GUARANTEES = ("paper", "true_rows", "m_invariance", "wong", "none")

_RELEASE_FILE = re.compile(r"release-(\d+)\.json$")
_SERIES_URL = re.compile(r"^(https?://.*?)/v1/series/([^/]+)(?:/releases(?:/(\d+))?)?/?$")


class UnsupportedRelease(ValueError):
    """A release this reader cannot read as rows (a chunk layout, a malformed document)."""


@dataclass(frozen=True, slots=True)
class Cluster:
    """A published cluster ``C*``: rows, private segment counts, global share, counterfeits."""

    cluster_id: str
    rows: tuple[tuple[str, ...], ...]
    private_terms: Mapping[str, int]
    global_share: Mapping[str, int]
    counterfeits: int = 0
    #: Public term -> positions of the rows that hold it (built from ``rows``).
    index: Mapping[str, frozenset[int]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        positions: dict[str, set[int]] = {}
        for i, row in enumerate(self.rows):
            for t in row:
                positions.setdefault(t, set()).add(i)
        object.__setattr__(self, "index", {t: frozenset(p) for t, p in positions.items()})

    @property
    def size(self) -> int:
        """``N(C*)``, counterfeit rows included."""
        return len(self.rows)

    def rows_with(self, itemset: Iterable[str]) -> int:
        """Rows that hold every term of ``itemset`` (all rows for the empty itemset)."""
        terms = sorted(set(itemset), key=lambda t: len(self.index.get(t, ())))
        if not terms:
            return self.size
        held = self.index.get(terms[0], frozenset())
        for t in terms[1:]:
            if not held:
                break
            held = held & self.index.get(t, frozenset())
        return len(held)

    def n_s(self, term: str) -> int:
        """``N(s, C*) = N(s, C_c) + N(s, C_ol)`` (Definition 4), at most ``N(C*)``."""
        return min(self.size, self.private_terms.get(term, 0) + self.global_share.get(term, 0))

    def private_term_names(self) -> set[str]:
        """Private terms with a copy in this cluster (segment or share)."""
        return {s for s in (*self.private_terms, *self.global_share) if self.n_s(s) > 0}


@dataclass(frozen=True, slots=True)
class Release:
    """One public release, as published (nothing is inferred here)."""

    series: str
    release_no: int
    label: str | None
    method: str
    params: Mapping[str, Any]
    population_rates: Mapping[str, float]
    global_bag: Mapping[str, int]
    global_counterfeits: int
    clusters: tuple[Cluster, ...]
    #: A complete release-level count of counterfeit rows, when the release publishes one.
    counterfeit_rows_total: int | None = None
    #: The release escalated to suppression beyond its budget: no upper bound on
    #: the copies it suppressed.
    suppression_beyond_budget: bool = False
    #: Private copies the earlier releases of the series published (set by
    #: :func:`load_series` when it holds every earlier release; ``None``: unknown). The
    #: suppression budget over the series (``suppression_scope = "series"``) depends on it.
    earlier_private_copies: int | None = None
    #: What the counts may differ from the raw data by (:data:`GUARANTEES`).
    guarantee: str = "paper"
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: Private term -> published copies (cluster segments plus global bag), built once.
    copies: Mapping[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        totals: dict[str, int] = dict(self.global_bag)
        for cluster in self.clusters:
            for s, n in cluster.private_terms.items():
                totals[s] = totals.get(s, 0) + n
        object.__setattr__(self, "copies", totals)

    @property
    def n_rows(self) -> int:
        """Published rows, counterfeits included."""
        return sum(c.size for c in self.clusters)

    @property
    def counterfeit_rows(self) -> int:
        """Counterfeit rows: the release-level total when published, else the clusters'
        ``counterfeits`` (then BP and FP1's only, a floor)."""
        if self.counterfeit_rows_total is not None:
            return self.counterfeit_rows_total
        return sum(c.counterfeits for c in self.clusters)

    @property
    def records(self) -> int:
        """The raw snapshot's records, ``n_rows - counterfeit_rows``: exact when the release
        publishes ``counterfeit_rows``, else at most that. Shares of the data divide by it."""
        return self.n_rows - self.counterfeit_rows

    @property
    def private_terms(self) -> set[str]:
        """Every private term the release publishes a copy or a rate of."""
        names: set[str] = set(self.population_rates) | set(self.global_bag)
        for cluster in self.clusters:
            names |= set(cluster.private_terms) | set(cluster.global_share)
        return names

    def published_copies(self, term: str) -> int:
        """All published copies of ``term``: cluster segments plus the global bag."""
        return self.copies.get(term, 0)

    def private_copies(self) -> int:
        """All published private copies of the release."""
        return sum(self.copies.values())

    def unplaced_copies(self, term: str) -> int:
        """Published copies of ``term`` that no cluster's ``N(s, C*)`` holds: the global bag
        less the clusters' shares (formula 3 rounds a share of a bag spread thin to 0, so
        this can be most of the bag)."""
        placed = sum(c.n_s(term) for c in self.clusters)
        return max(0, self.published_copies(term) - placed)


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise UnsupportedRelease(f"{what} is not an integer: {value!r}")
    return value


def _counts(value: Any, what: str) -> dict[str, int]:
    if not isinstance(value, Mapping):
        raise UnsupportedRelease(f"{what} is not an object of counts")
    return {str(k): _int(v, f"{what}[{k!r}]") for k, v in value.items()}


def parse_release(document: Mapping[str, Any]) -> Release:
    """A release's public JSON (one document, ``format=json``) as a :class:`Release`.

    Raises :class:`UnsupportedRelease` for disassociation's chunk layout and for a document
    that lacks what an analyst needs (clusters with rows).
    """
    method = str(document.get("method", ""))
    clusters_doc = document.get("clusters")
    if not isinstance(clusters_doc, list):
        raise UnsupportedRelease("the document has no list of clusters")
    if method == "disassociation" or any(
        isinstance(c, Mapping) and "rows" not in c for c in clusters_doc
    ):
        raise UnsupportedRelease(
            f"release {document.get('release_no')} of method {method or '?'!r} publishes "
            "chunks, not rows; this reader reads row-publishing methods only (sanony, anony, "
            "kanony, ...)"
        )
    clusters: list[Cluster] = []
    for c in clusters_doc:
        if not isinstance(c, Mapping):
            raise UnsupportedRelease("a cluster is not an object")
        cid = str(c.get("cluster_id", f"c{len(clusters) + 1}"))
        rows = tuple(tuple(sorted({str(t) for t in row})) for row in c["rows"])
        clusters.append(
            Cluster(
                cluster_id=cid,
                rows=rows,
                private_terms=_counts(c.get("private_terms", {}), f"{cid}.private_terms"),
                global_share=_counts(c.get("global_share", {}), f"{cid}.global_share"),
                counterfeits=_int(c.get("counterfeits", 0), f"{cid}.counterfeits"),
            )
        )
    total = next(
        (
            document[name]
            for name in RELEASE_COUNTERFEIT_FIELDS
            if isinstance(document.get(name), int) and not isinstance(document[name], bool)
        ),
        None,
    )
    known = {
        "series",
        "release_no",
        "label",
        "method",
        "params",
        "n_rows",
        "population_rates",
        "global_bag",
        "global_counterfeits",
        "clusters",
        "suppression_beyond_budget",
        "guarantee",
        *RELEASE_COUNTERFEIT_FIELDS,
    }
    guarantee = document.get("guarantee")
    guarantee = GUARANTEES[0] if guarantee is None else guarantee
    if guarantee not in GUARANTEES:
        raise UnsupportedRelease(
            f"guarantee is {guarantee!r}; this reader knows {', '.join(map(repr, GUARANTEES))}"
        )
    label = document.get("label")
    return Release(
        series=str(document.get("series", "")),
        release_no=_int(document.get("release_no"), "release_no"),
        label=None if label is None else str(label),
        method=method,
        params=dict(document.get("params") or {}),
        population_rates={
            str(k): float(v) for k, v in document.get("population_rates", {}).items()
        },
        global_bag=_counts(document.get("global_bag", {}), "global_bag"),
        global_counterfeits=_int(document.get("global_counterfeits", 0), "global_counterfeits"),
        clusters=tuple(clusters),
        counterfeit_rows_total=total,
        suppression_beyond_budget=bool(document.get("suppression_beyond_budget", False)),
        guarantee=str(guarantee),
        extra={k: v for k, v in document.items() if k not in known},
    )


def _with_history(releases: Iterable[Release]) -> list[Release]:
    """Releases in order, each told the private copies its earlier releases published
    when every earlier one (1 .. n-1) is among them."""
    ordered = sorted(releases, key=lambda r: r.release_no)
    out: list[Release] = []
    earlier = 0
    for position, release in enumerate(ordered):
        complete = release.release_no == position + 1
        out.append(_replace_earlier(release, earlier if complete else None))
        earlier += release.private_copies()
    return out


def _replace_earlier(release: Release, earlier: int | None) -> Release:
    from dataclasses import replace

    return replace(release, earlier_private_copies=earlier)


def load_release(path: str | Path) -> Release:
    """One release from its JSON file."""
    with open(path, encoding="utf-8") as fh:
        return parse_release(json.load(fh))


def load_series(
    source: str | Path,
    *,
    series: str | None = None,
    key: str | None = None,
    transport: Any = None,
) -> list[Release]:
    """Every release of a source, oldest first.

    ``source`` is a release file, a directory of ``release-*.json`` (what ``serialpub
    publish-local --out DIR`` writes), a series URL (``http://host:8000/v1/series/NAME``,
    or ``.../releases/3`` for one release) or the API's base URL with ``series``; the
    reader's ``key`` goes with a URL. ``transport`` is an optional httpx transport (tests).
    """
    text = str(source)
    if text.startswith(("http://", "https://")):
        found = _SERIES_URL.match(text)
        if found:  # a series URL, as ``serialpub verify`` takes, or one release's
            base, series = found.group(1), found.group(2)
            nos = None if found.group(3) is None else [int(found.group(3))]
            return load_api(base, series, key, release_nos=nos, transport=transport)
        if not series:
            raise ValueError("reading from the API needs the series name (or a series URL)")
        return load_api(text, series, key, transport=transport)
    path = Path(source)
    if path.is_dir():
        files = sorted(
            (p for p in path.iterdir() if _RELEASE_FILE.search(p.name)),
            key=lambda p: int(_RELEASE_FILE.search(p.name).group(1)),  # type: ignore[union-attr]
        )
        if not files:
            raise FileNotFoundError(f"no release-*.json in {path}")
        return _with_history(load_release(p) for p in files)
    return _with_history([load_release(path)])


def load_api(
    base_url: str,
    series: str,
    key: str | None,
    *,
    release_nos: Sequence[int] | None = None,
    transport: Any = None,
    timeout: float = 60.0,
) -> list[Release]:
    """Releases of ``series`` from the API (``GET /v1/series/{name}/releases`` lists them,
    ``GET /v1/series/{name}/releases/{no}`` reads each), with ``Authorization: Bearer key``."""
    import httpx

    headers = {"Authorization": f"Bearer {key}"} if key else {}
    with httpx.Client(
        base_url=base_url.rstrip("/"), headers=headers, transport=transport, timeout=timeout
    ) as client:
        if release_nos is None:
            listing = client.get(f"/v1/series/{series}/releases")
            listing.raise_for_status()
            release_nos = sorted(int(item["release_no"]) for item in listing.json())
        releases = []
        for no in release_nos:
            response = client.get(f"/v1/series/{series}/releases/{no}")
            response.raise_for_status()
            releases.append(parse_release(response.json()))
    return _with_history(releases)


def rows_table(releases: Iterable[Release]) -> pd.DataFrame:
    """One line per published row: ``release_no, cluster_id, row, terms`` (a tuple of the
    row's public terms; counterfeit rows included, they cannot be told apart)."""
    records = [
        (r.release_no, c.cluster_id, i, row)
        for r in releases
        for c in r.clusters
        for i, row in enumerate(c.rows)
    ]
    return pd.DataFrame.from_records(records, columns=["release_no", "cluster_id", "row", "terms"])


def private_table(releases: Iterable[Release]) -> pd.DataFrame:
    """One line per (release, cluster, private term): ``private`` (``N(s, C_c)``),
    ``global_share`` (``N(s, C_ol)``), ``n_s`` (``N(s, C*)``, Definition 4) and the cluster's
    ``n_rows`` (``N(C*)``) and published ``counterfeits``."""
    records = [
        (
            r.release_no,
            c.cluster_id,
            s,
            c.private_terms.get(s, 0),
            c.global_share.get(s, 0),
            c.n_s(s),
            c.size,
            c.counterfeits,
        )
        for r in releases
        for c in r.clusters
        for s in sorted(set(c.private_terms) | set(c.global_share))
    ]
    return pd.DataFrame.from_records(
        records,
        columns=[
            "release_no",
            "cluster_id",
            "term",
            "private",
            "global_share",
            "n_s",
            "n_rows",
            "counterfeits",
        ],
    )


def global_bag_table(releases: Iterable[Release]) -> pd.DataFrame:
    """One line per (release, private term in the global bag): ``copies`` in the bag and
    ``shared``, the sum of the clusters' ``global_share`` (rounded shares, formula 3: the
    two can differ by a few copies)."""
    records = [
        (
            r.release_no,
            s,
            n,
            sum(c.global_share.get(s, 0) for c in r.clusters),
        )
        for r in releases
        for s, n in sorted(r.global_bag.items())
    ]
    return pd.DataFrame.from_records(records, columns=["release_no", "term", "copies", "shared"])

"""``serialpub verify``: an auditor's check of a series from its public releases alone.

    serialpub verify releases/                                  # publish-local's output
    serialpub verify http://host:8000/v1/series/prison-health --key KEY

Every row's serial risk (design.md §4, formula 15) is recomputed from the public release JSON (the
files, or ``GET …/releases/{no}`` for each release), nothing else: no ledger, no stored risk.
Each release is judged against the ``r_th`` it prints (``--r-th`` overrides). From a series
URL with an auditor's or admin's key, the service's own figures (``GET …/risk``) are compared
with the recomputation, release by release.

Beside it, the frequency detector (docs/attacks.md): the serial risk under an
adversary who, in each cluster, discounts the published number of counterfeits by taking
out the rows rarest across the series (``detector``), beside ``k`` random rows (``blind``);
it needs no label. With ``--ledger`` (publish-local's ledgers: ``releases.private/`` beside
``releases/`` by default) it also reports each
release's counterfeit-detection AUC, the ``perfect`` detector (every counterfeit removed: the
upper bound) and ``control`` (``k`` true rows per cluster removed: what removal alone does to
the recomputed risk). Then the Bayesian adversary (``weighed by``): the paper's risk averaged
over hypotheses of which rows are the published number of counterfeits, with equal odds
(``blind``) and, with ``--ledger``, the odds of the cross-validated logistic detector.

A breach is a row over ``r_th`` under any adversary computed from the public files alone: the
paper's, the published-total estimate, the rarity detector and random removal (``discounted
by detector`` and ``blind``), and the Bayesian adversary of the counts (``weighed by blind``,
rows beyond its Monte Carlo noise). Those that need the ledgers (``perfect``, ``control``,
``logistic``) are printed and do not change the exit status: an outsider has no ledger. A
release with no counterfeit row (``guarantee: true_rows``) has nothing to discount: every such
adversary is the paper's.

Exit status: 0 when every row is within ``r_th`` under every public adversary (and the service
agrees), 1 on a breach, 3 when the service's figures disagree with the recomputation, 2 on bad
input.
"""

from __future__ import annotations

import dataclasses
import json
import math
import multiprocessing
import os
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Annotated, Any

import typer

from app.core.model import PublishedRelease, ReleaseLedger
from app.core.risk.assess import ReleaseRisk, assess_series
from app.io.ledger import read_ledger, read_release

__all__ = ["assess_in_processes", "verify"]

#: Relative tolerance between the service's figure and the recomputation (both floats).
_TOLERANCE = 1e-9


def _get(url: str, key: str | None) -> Any:
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=300) as response:  # noqa: S310
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", "replace")[:300]
        raise typer.BadParameter(f"GET {url}: {exc.code} {detail}", param_hint="SOURCE") from exc
    except urllib.error.URLError as exc:
        raise typer.BadParameter(f"GET {url}: {exc.reason}", param_hint="SOURCE") from exc


def _from_directory(path: Path) -> list[dict[str, Any]]:
    files = sorted(path.glob("release-*.json"))
    if not files:
        raise typer.BadParameter(f"{path} holds no release-NNN.json", param_hint="SOURCE")
    return [json.loads(f.read_text(encoding="utf-8")) for f in files]


def _from_service(url: str, key: str | None) -> tuple[list[dict[str, Any]], Any]:
    base = url.rstrip("/")
    listed = _get(f"{base}/releases", key)
    documents = [_get(f"{base}/releases/{r['release_no']}", key) for r in listed]
    try:
        service_risk = _get(f"{base}/risk", key)
    except typer.BadParameter:
        service_risk = None  # an analyst's key: the recomputation alone
    return documents, service_risk


#: The fewest rows in a series from which ``verify`` judges in several processes by default:
#: below it, starting them costs more than they save.
_SPLIT_FROM = 100_000

#: The series a forked judging process reads (set before the fork, inherited, never pickled).
_SERIES: list[PublishedRelease] = []


def _judge_part(r_th: float, part: list[int]) -> list[ReleaseRisk]:
    return assess_series(_SERIES, r_th, with_rows=False, only=part)


def assess_in_processes(
    releases: Sequence[PublishedRelease], r_th: float, jobs: int
) -> list[ReleaseRisk]:
    """:func:`~app.core.risk.assess.assess_series` of every release (without rows), the
    releases dealt round-robin to ``jobs`` processes. Each process builds the whole series'
    index and judges its part against every release, so each holds the whole series (memory
    ``jobs`` times one judgement's) and the index is built ``jobs`` times; the rest divides
    (docs/scale-out.md, "Measured here"). One job, or a platform without ``fork``, judges in
    this process."""
    jobs = max(1, min(jobs, len(releases)))
    if jobs == 1 or "fork" not in multiprocessing.get_all_start_methods():
        return assess_series(releases, r_th, with_rows=False)
    parts = [list(range(k, len(releases), jobs)) for k in range(jobs)]
    _SERIES[:] = releases
    try:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(jobs, mp_context=context) as pool:
            results = list(pool.map(_judge_part, [r_th] * jobs, parts))
    finally:
        _SERIES.clear()
    by_position = {
        j: risk
        for part, risks in zip(parts, results, strict=True)
        for j, risk in zip(part, risks, strict=True)
    }
    return [by_position[j] for j in range(len(releases))]


def _releases(documents: Sequence[dict[str, Any]]) -> list[PublishedRelease]:
    if any(
        "clusters" not in d or "rows" not in (d["clusters"] or [{"rows": []}])[0] for d in documents
    ):
        raise typer.BadParameter(
            "only row-publishing releases (Anony family) have a serial risk to verify",
            param_hint="SOURCE",
        )
    numbers = [d["release_no"] for d in documents]
    if numbers != list(range(1, len(numbers) + 1)):
        raise typer.BadParameter(
            f"releases must be 1..n without gaps, found {numbers}", param_hint="SOURCE"
        )
    return [read_release(d) for d in documents]


def _ledgers(path: Path | None, releases: Sequence[PublishedRelease]) -> list[ReleaseLedger | None]:
    """publish-local's ledgers of ``releases``, each checked against its release
    (:func:`_matches`), or ``None`` each without ``--ledger``."""
    if path is None:
        return [None] * len(releases)
    if not path.is_dir():
        raise typer.BadParameter(f"{path} is not a directory", param_hint="--ledger")
    ledgers: list[ReleaseLedger | None] = []
    for release in releases:
        file = path / f"ledger-{release.release_no:03d}.json"
        if not file.exists():
            raise typer.BadParameter(f"{file} is missing", param_hint="--ledger")
        ledger = read_ledger(json.loads(file.read_text(encoding="utf-8")))[0]
        if not _matches(release, ledger):
            raise typer.BadParameter(
                f"{file} is not the ledger of release {release.release_no}", param_hint="--ledger"
            )
        ledgers.append(ledger)
    return ledgers


def _matches(release: PublishedRelease, ledger: ReleaseLedger) -> bool:
    """Whether ``ledger`` can be ``release``'s: as many clusters, each of the same size (its
    individuals, one per row) and its counterfeits among its rows."""
    if len(ledger.clusters) != len(release.clusters):
        return False
    pairs = zip(release.clusters, ledger.clusters, strict=True)
    return all(
        len(led.individuals) in (0, c.size) and all(p < c.size for p in led.counterfeit_rows)
        for c, led in pairs
    )


def _frequency(
    releases: Sequence[PublishedRelease],
    ledgers: Sequence[ReleaseLedger | None],
    r_th: float,
    draws: int,
) -> dict[str, Any]:
    # Imported here: sklearn loads only when a verification runs.
    from app.core.attacks.frequency_risk import frequency_audit

    def show(phase: str, fraction: float) -> None:
        # The Bayesian adversary assesses the series once per draw: minutes on large ones.
        end = "\n" if fraction >= 1.0 else ""
        typer.echo(f"\r{phase} {fraction:6.1%}{end}", nl=False, err=True)

    return frequency_audit(releases, ledgers, r_th, seed=0, draws=draws, progress=show)


def _echo_frequency(frequency: dict[str, Any]) -> None:
    for name, risks in frequency.get("risk", {}).items():
        line = ", ".join(
            f"r{r['release_no']} {r['rows_over_threshold']} over (max {r['max_serial_risk']:.2f})"
            for r in risks
        )
        typer.echo(f"discounted by {name}: {line}", err=True)
    for name, risks in frequency.get("mixture", {}).items():
        line = ", ".join(
            f"r{r['release_no']} {r['rows_over_threshold']} over, {r['rows_surely_over']} "
            f"surely (max {r['max_serial_risk']:.2f})"
            for r in risks
        )
        typer.echo(f"weighed by {name} ({risks[0]['draws']} draws): {line}", err=True)
    for d in frequency["detection"]:
        if d["counterfeits"]:
            auc = d["auc"]
            typer.echo(
                f"release {d['release_no']}: counterfeit AUC rarity {_num(auc['rarity'])}, "
                f"logistic {_num(auc['logistic'])}, with counts "
                f"{_num(auc['logistic_with_counts'])} ({d['counterfeits']} counterfeits)",
                err=True,
            )


#: The frequency section's adversaries that read the public files alone: ``risk`` (discounted
#: by) and ``mixture`` (weighed by) names, and the count each one's breach is read from.
_PUBLIC = (
    ("risk", "detector", "rows_over_threshold"),
    ("risk", "blind", "rows_over_threshold"),
    ("mixture", "blind", "rows_surely_over"),
)


def public_breaches(
    report: Sequence[dict[str, Any]], frequency: dict[str, Any]
) -> list[dict[str, Any]]:
    """Every (adversary, release) with rows over ``r_th`` computed from public data alone:
    the paper's adversary, the published-total estimate and the frequency section's public
    adversaries (:data:`_PUBLIC`)."""
    found: list[dict[str, Any]] = []
    for r in report:
        if r["rows_over_threshold"]:
            found.append(_breach("paper", r["release_no"], r["rows_over_threshold"], r))
        exposure = r.get("published_total")
        if exposure and exposure["rows_over_threshold"]:
            found.append(
                _breach(
                    "published_total", r["release_no"], exposure["rows_over_threshold"], exposure
                )
            )
    for section, name, count in _PUBLIC:
        for r in frequency.get(section, {}).get(name, []):
            if r.get(count):
                kind = "discounted_by" if section == "risk" else "weighed_by"
                found.append(_breach(f"{kind}_{name}", r["release_no"], r[count], r))
    return found


def _breach(adversary: str, release_no: int, rows: int, figures: dict[str, Any]) -> dict[str, Any]:
    return {
        "adversary": adversary,
        "release_no": release_no,
        "rows_over_threshold": rows,
        "max_serial_risk": figures.get("max_serial_risk"),
    }


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _disagreements(ours: Sequence[dict[str, Any]], theirs: Sequence[dict[str, Any]]) -> list[str]:
    found = []
    by_no = {r["release_no"]: r for r in theirs}
    for mine in ours:
        other = by_no.get(mine["release_no"])
        if other is None:
            found.append(f"release {mine['release_no']}: the service reports no risk")
            continue
        if other["rows_over_threshold"] != mine["rows_over_threshold"] or not math.isclose(
            other["max_serial_risk"],
            mine["max_serial_risk"],
            rel_tol=_TOLERANCE,
            abs_tol=_TOLERANCE,
        ):
            found.append(
                f"release {mine['release_no']}: service max {other['max_serial_risk']}, "
                f"{other['rows_over_threshold']} rows over; recomputed max "
                f"{mine['max_serial_risk']}, {mine['rows_over_threshold']} rows over"
            )
    return found


def verify(
    source: Annotated[
        str,
        typer.Argument(
            help="a directory of public release JSON (release-001.json, ...), or a series URL "
            "(http://host/v1/series/NAME)"
        ),
    ],
    key: Annotated[
        str | None,
        typer.Option(
            help="API key for a series URL (an auditor's also compares the service's risk)",
            envvar="SERIALPUB_KEY",
        ),
    ] = None,
    r_th: Annotated[
        float | None,
        typer.Option("--r-th", help="judge against this threshold instead of each release's own"),
    ] = None,
    ledger: Annotated[
        Path | None,
        typer.Option(
            help="private ledgers (ledger-001.json, ...: publish-local writes them beside "
            "its public folder, releases.private for releases) to score the counterfeit "
            "detector against"
        ),
    ] = None,
    mixture_draws: Annotated[
        int,
        typer.Option(
            min=0,
            max=256,
            help="hypotheses the Bayesian adversary draws (each one assessment of the "
            "series; 0: none)",
        ),
    ] = 16,
    jobs: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=64,
            help="processes judging the paper's adversary, the releases dealt among them; "
            "each holds the whole series (default: the CPUs, at most 4, from "
            f"{_SPLIT_FROM:,} rows in the series; one below)",
        ),
    ] = None,
) -> None:
    """Recompute every row's serial risk from public releases; exit 1 on a breach."""
    service_risk = None
    if source.startswith(("http://", "https://")):
        documents, service_risk = _from_service(source, key)
    else:
        path = Path(source)
        if not path.is_dir():
            raise typer.BadParameter(
                f"{source} is neither a directory nor a URL", param_hint="SOURCE"
            )
        documents = _from_directory(path)
    releases = _releases(documents)
    ledgers = _ledgers(ledger, releases)
    thresholds = [r_th if r_th is not None else float(d["params"]["r_th"]) for d in documents]
    if jobs is None:
        rows = sum(r.n_rows for r in releases)
        processes = min(4, os.cpu_count() or 1) if rows >= _SPLIT_FROM else 1
    else:
        processes = jobs
    report = []
    # One assessment per distinct threshold (a series has one unless its r_th changed).
    for threshold in sorted(set(thresholds)):
        risks = assess_in_processes(releases, threshold, processes)
        for document, risk, own in zip(documents, risks, thresholds, strict=True):
            if own == threshold:
                report.append(
                    {
                        "release_no": document["release_no"],
                        "r_th": threshold,
                        "max_serial_risk": risk.max_serial_risk,
                        "n_rows": risk.n_rows,
                        "rows_over_threshold": risk.rows_over_threshold,
                        # What the release's published counterfeit total gives an adversary
                        # (a first-order estimate; docs/attacks.md): reported, not a breach.
                        "published_total": (
                            None
                            if risk.published_total is None
                            else dataclasses.asdict(risk.published_total)
                        ),
                    }
                )
    report.sort(key=lambda r: r["release_no"])
    breaches = sum(r["rows_over_threshold"] for r in report)
    disagreements = _disagreements(report, service_risk) if service_risk is not None else []
    # The detector-aware risk against the latest release's threshold (a series has one).
    frequency = _frequency(releases, ledgers, thresholds[-1], mixture_draws)
    public = public_breaches(report, frequency)
    typer.echo(
        json.dumps(
            {
                "releases": report,
                "rows_over_threshold": breaches,
                "public_breaches": public,
                "service_compared": service_risk is not None,
                "disagreements": disagreements,
                "frequency": frequency,
            },
            indent=2,
        )
    )
    for r in report:
        typer.echo(
            f"release {r['release_no']}: max serial risk {r['max_serial_risk']:.4f} "
            f"(r_th {r['r_th']:g}), {r['rows_over_threshold']} of {r['n_rows']} rows "
            "over",
            err=True,
        )
        exposure = r["published_total"]
        if exposure is not None:
            typer.echo(
                f"  its published counterfeit total: {exposure['unattributed']} rows in no "
                f"cluster's count, phi {exposure['factor']:.4f}, an estimated "
                f"{exposure['rows_over_threshold']} rows over r_th (largest "
                f"{exposure['max_serial_risk']:.4f})",
                err=True,
            )
    _echo_frequency(frequency)
    for line in disagreements:
        typer.echo(f"disagreement: {line}", err=True)
    if disagreements:
        raise typer.Exit(3)
    for b in public:
        typer.echo(
            f"BREACH ({b['adversary']}): release {b['release_no']}, "
            f"{b['rows_over_threshold']} rows over r_th",
            err=True,
        )
    if public:
        raise typer.Exit(1)

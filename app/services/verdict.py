"""What ``serialpub verify`` concludes of a series, for the web view's auditors.

The same computation as ``serialpub verify http://host/v1/series/NAME --key KEY`` (README,
"The core"): every row's serial risk recomputed from the public release JSON alone, each
release judged at the ``r_th`` it prints; the frequency detector's public adversaries
(discounted by the rarity ``detector`` and ``blind``, weighed by ``blind`` over the default
16 draws, seed 0); a breach is a row over ``r_th`` under any of them; the service's own risk
summaries compared with the recomputation. ``tests/web`` runs the command beside it.

On a long series this takes minutes (the Bayesian adversary assesses the series once per
draw), so it runs in the background, once per state of the series, and a page waits for it
only a moment (:func:`verdict`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import orjson

from app.core.attacks.frequency_risk import frequency_audit
from app.core.attacks.mixture_risk import DEFAULT_DRAWS
from app.core.risk.assess import assess_series
from app.db.engine import Database
from app.db.models import Series
from app.io.ledger import read_release
from app.schemas.overview import Breach, Verdict, VerifiedRelease
from app.schemas.risk import RiskSummary
from app.services.public_files import document_bytes, release_documents

__all__ = ["clear_verdicts", "verdict", "verify_documents"]

#: Relative tolerance between the service's figure and the recomputation (as verify's).
_TOLERANCE = 1e-9
#: The frequency section's adversaries that read the public files alone: section, name, and
#: the count a breach is read from (as ``serialpub verify``).
_PUBLIC = (
    ("risk", "detector", "rows_over_threshold"),
    ("risk", "blind", "rows_over_threshold"),
    ("mixture", "blind", "rows_surely_over"),
)
_VERDICTS: OrderedDict[tuple[int, tuple[str, ...]], asyncio.Task[Verdict]] = OrderedDict()
_KEPT = 32


def clear_verdicts() -> None:
    _VERDICTS.clear()


def _recomputed(documents: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], Any, float]:
    releases = [read_release(d) for d in documents]
    thresholds = [float(d["params"]["r_th"]) for d in documents]
    report: list[dict[str, Any]] = []
    for threshold in sorted(set(thresholds)):
        risks = assess_series(releases, threshold, with_rows=False)
        for document, risk, own in zip(documents, risks, thresholds, strict=True):
            if own == threshold:
                exposure = risk.published_total
                report.append(
                    {
                        "release_no": document["release_no"],
                        "r_th": threshold,
                        "max_serial_risk": risk.max_serial_risk,
                        "n_rows": risk.n_rows,
                        "rows_over_threshold": risk.rows_over_threshold,
                        "published_total": None
                        if exposure is None
                        else dataclasses.asdict(exposure),
                    }
                )
    report.sort(key=lambda r: r["release_no"])
    frequency = frequency_audit(
        releases, [None] * len(releases), thresholds[-1], seed=0, draws=DEFAULT_DRAWS
    )
    return report, frequency, thresholds[-1]


def _breaches(report: Sequence[dict[str, Any]], frequency: dict[str, Any]) -> list[Breach]:
    found: list[Breach] = []
    for r in report:
        if r["rows_over_threshold"]:
            found.append(_breach("paper", r["release_no"], r["rows_over_threshold"], r))
        exposure = r.get("published_total")
        if exposure and exposure["rows_over_threshold"]:
            count = exposure["rows_over_threshold"]
            found.append(_breach("published_total", r["release_no"], count, exposure))
    for section, name, count in _PUBLIC:
        for r in frequency.get(section, {}).get(name, []):
            if r.get(count):
                kind = "discounted_by" if section == "risk" else "weighed_by"
                found.append(_breach(f"{kind}_{name}", r["release_no"], r[count], r))
    return found


def _breach(adversary: str, release_no: int, rows: int, figures: dict[str, Any]) -> Breach:
    return Breach(
        adversary=adversary,
        release_no=release_no,
        rows_over_threshold=rows,
        max_serial_risk=figures.get("max_serial_risk"),
    )


def _disagreements(ours: Sequence[dict[str, Any]], theirs: Sequence[RiskSummary]) -> list[str]:
    found = []
    by_no = {r.release_no: r for r in theirs}
    for mine in ours:
        other = by_no.get(mine["release_no"])
        if other is None:
            found.append(f"release {mine['release_no']}: the service reports no risk")
        elif other.rows_over_threshold != mine["rows_over_threshold"] or not math.isclose(
            other.max_serial_risk, mine["max_serial_risk"], rel_tol=_TOLERANCE, abs_tol=_TOLERANCE
        ):
            found.append(
                f"release {mine['release_no']}: service max {other.max_serial_risk}, "
                f"{other.rows_over_threshold} rows over; recomputed max "
                f"{mine['max_serial_risk']}, {mine['rows_over_threshold']} rows over"
            )
    return found


def verify_documents(
    documents: Sequence[dict[str, Any]], service_risk: Sequence[RiskSummary]
) -> Verdict:
    """``serialpub verify``'s conclusion on a series' public release documents (1..n)."""
    started = time.perf_counter()
    if not documents or any(
        "rows" not in (d.get("clusters") or [{"rows": []}])[0] for d in documents
    ):
        return Verdict(
            conclusion="not_applicable",
            releases=[],
            breaches=[],
            disagreements=[],
            draws=0,
            seconds=0.0,
        )
    report, frequency, _ = _recomputed(documents)
    breaches = _breaches(report, frequency)
    disagreements = _disagreements(report, service_risk)
    return Verdict(
        conclusion="disagreement" if disagreements else "breach" if breaches else "pass",
        releases=[
            VerifiedRelease(**{k: r[k] for k in VerifiedRelease.model_fields}) for r in report
        ],
        breaches=breaches,
        disagreements=disagreements,
        draws=DEFAULT_DRAWS,
        seconds=round(time.perf_counter() - started, 3),
    )


async def _compute(
    db: Database, series: Series, n_releases: int, service_risk: Sequence[RiskSummary]
) -> Verdict:
    documents = [
        orjson.loads(await document_bytes(db, d))
        for d in await release_documents(db, series, n_releases)
    ]
    return await asyncio.to_thread(verify_documents, documents, list(service_risk))


async def verdict(
    db: Database,
    series: Series,
    n_releases: int,
    service_risk: Sequence[RiskSummary],
    wait: float,
) -> Verdict | None:
    """The series' verdict, computed once per state of the series (the etags of its
    releases) in a task of its own; ``None`` while it is still running after ``wait``
    seconds (the page then says so and refreshes)."""
    documents = await release_documents(db, series, n_releases)
    key = (series.id, tuple(d.meta.etag for d in documents))
    task = _VERDICTS.get(key)
    if task is None or (task.done() and (task.cancelled() or task.exception() is not None)):
        task = asyncio.get_running_loop().create_task(
            _compute(db, series, n_releases, service_risk)
        )
        _VERDICTS[key] = task
        while len(_VERDICTS) > _KEPT:
            _VERDICTS.popitem(last=False)
    _VERDICTS.move_to_end(key)
    done, _ = await asyncio.wait({task}, timeout=wait)
    return task.result() if done else None

"""What a dry run answers (``POST …/releases?dry_run=true``; docs/api-releases.md "POST
/v1/series/{name}/releases").

A dry run is a job like a publication: the worker computes the release and its risk in the
job's compute child, against the series' releases as they are when it runs, and stores no
release; the answer is kept on the job's row (``result``) for the ``wait=true`` response and
``GET /v1/jobs/{id}``. The API process used to compute it itself, the whole publication and
the series' history in one request: 1.76 GiB at the default caps, 1.1 GiB still held
afterwards, against compose's 1 GiB for the app (docs/performance.md, "Dry runs").

The risk is kept for both audiences, as :func:`app.services.renderings.store_risk_documents`
files a publication's: auditors and admins read every counterfeit row and the suppressed
copies, everybody else what the release would publish.
"""

from __future__ import annotations

from typing import Any

from app.core.errors import WarningCode
from app.core.guarantees import guarantee_of
from app.jobs.compute import Computed
from app.jobs.context import JobContext
from app.services.releases import summary
from app.services.risk import public_counterfeits, risk_summary
from app.services.series import series_warnings

__all__ = ["dry_run_result"]


def dry_run_result(context: JobContext, computed: Computed) -> dict[str, Any]:
    """The job's ``result``: ``{"release", "risk": {"public", "private"}, "warnings"}`` as
    JSON values (``app.services.publishing.dry_run_answer`` reads it back)."""
    publication = computed.publication
    release, ledger = publication.release, publication.ledger
    risk = computed.risk
    assert risk is not None, "a dry run's hand-off asks for the release's risk"
    guarantee = guarantee_of(context.method.name, context.echoed)
    public = risk_summary(risk, release, public_counterfeits(release), True, guarantee=guarantee)
    private = risk_summary(
        risk,
        release,
        ledger.counterfeit_rows + release.global_counterfeits,
        False,
        dict(ledger.suppressed),
        guarantee=guarantee,
    )
    return {
        "release": summary(release, context.method.name).model_dump(mode="json"),
        "risk": {
            "public": public.model_dump(mode="json"),
            "private": private.model_dump(mode="json"),
        },
        "warnings": _warnings(context, publication.report),
    }


def _warnings(context: JobContext, report: dict[str, Any]) -> list[dict[str, str]]:
    """The series' (a publisher's seed), then the spellings that fold onto a private term,
    then the compute child's (a disclosing rate, a term printed in clear earlier, what the
    published total gives away, an escalation): what a publication's answer says. The report
    carries the term warnings in both ``ingest_warnings`` and ``warnings``: each once."""
    found = report.get("warnings")
    folded = report.get("ingest_warnings")
    listed = [
        *series_warnings(context.series),
        *(folded if isinstance(folded, list) else []),
        *(
            w
            for w in (found if isinstance(found, list) else [])
            if w.get("code") != WarningCode.PUBLISHER_SEED
        ),
    ]
    seen: set[tuple[tuple[str, str], ...]] = set()
    unique = []
    for warning in listed:
        key = tuple(sorted(warning.items()))
        if key not in seen:
            seen.add(key)
            unique.append(warning)
    return unique

"""A series at a glance, as the web view shows it: each release's public figures, and for
auditors and admins its risk, escalation and what ``serialpub verify`` concludes."""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import BaseModel, Field

from app.schemas.jobs import JobOut
from app.schemas.releases import Withdrawal
from app.schemas.risk import CoverEntryOut, GuaranteeOut, RiskSummary, RowRiskPage


class ReleaseFigures(BaseModel):
    """What every reader of the release reads in its public JSON, with its publish time."""

    release_no: int
    label: str | None
    method: str
    created_at: dt.datetime
    n_rows: int | None = Field(description="Published rows; null for a chunk layout")
    n_clusters: int
    counterfeit_rows: int | None = Field(
        description="The public header's counterfeit_rows; null for a withdrawn release the "
        "reader may not read"
    )
    private_copies: dict[str, int] | None = Field(
        description="Published copies of each private term (cluster segments and global bag); "
        "null for a chunk layout, or a withdrawn release the reader may not read"
    )
    guarantee: GuaranteeOut
    suppression_beyond_budget: bool
    params: dict[str, Any]
    withdrawn: Withdrawal | None = Field(
        None, description="When and why an admin withdrew it (the release list's)"
    )

    @property
    def copies_total(self) -> int | None:
        return None if self.private_copies is None else sum(self.private_copies.values())


class EscalationOut(BaseModel):
    """How far the release's publication escalated (the job report's ``escalation``)."""

    step: str | None = Field(description="The step that published, null when none did")
    steps: list[str]
    clusters_before: int | None = None
    clusters_after: int | None = None


class ReleaseAudit(BaseModel):
    """Auditors and admins: the release's risk as of now and how it was published."""

    release_no: int
    risk: RiskSummary
    escalation: EscalationOut | None
    suppressed: dict[str, int] = Field(description="Copies suppressed per term (the ledger's)")


class ReleaseRisk(BaseModel):
    """Auditors and admins, on a release's page: its risk, rows by risk, largest overlaps."""

    risk: RiskSummary
    rows: RowRiskPage = Field(description="A page of the rows, riskiest first")
    cover: list[CoverEntryOut] = Field(description="The largest overlaps first")
    cover_total: int


class Breach(BaseModel):
    adversary: str
    release_no: int
    rows_over_threshold: int
    max_serial_risk: float | None


class VerifiedRelease(BaseModel):
    release_no: int
    r_th: float
    max_serial_risk: float
    n_rows: int
    rows_over_threshold: int


class Verdict(BaseModel):
    """What ``serialpub verify`` concludes from the public releases: ``pass`` (exit 0),
    ``breach`` (exit 1), ``disagreement`` (exit 3: the service's risk differs from the
    recomputation), ``not_applicable`` (chunk layouts have no serial risk to verify)."""

    conclusion: Literal["pass", "breach", "disagreement", "not_applicable"]
    releases: list[VerifiedRelease]
    breaches: list[Breach]
    disagreements: list[str]
    draws: int = Field(description="Hypotheses of the Bayesian adversary of the counts")
    seconds: float


class TermCount(BaseModel):
    """A private term's published count in one release and the interval the analyst's reader
    (``app.analysis.term_count``, docs/analysis.md) gives the true count."""

    release_no: int
    label: str | None
    published: int
    low: float
    high: float | None = Field(description="null: no upper bound (suppression beyond budget)")
    counterfeits: int
    suppression: float | None
    counterfeits_complete: bool


class JobLine(BaseModel):
    """A job in a series' list, as ``GET /v1/jobs/{id}`` shows it to the reader."""

    job: JobOut
    label: str | None
    n_transactions: int


class SeriesPage(BaseModel):
    """Everything the series page shows to one reader."""

    releases: list[ReleaseFigures]
    audits: list[ReleaseAudit] | None = Field(description="Auditors and admins only")
    jobs: list[JobLine] | None = Field(
        description="Auditors and admins: the series' jobs; publishers: the ones their key "
        "posted; null for analysts"
    )

"""Publication jobs."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.schemas.risk import RiskSummary

SUMMARY_EXAMPLE: dict[str, Any] = {
    "release_no": 1,
    "label": "2024",
    "method": "sanony",
    "n_rows": 6,
    "n_clusters": 3,
    "counterfeits": 1,
}


class ReleaseSummary(BaseModel):
    """A release as a publication (or a dry run) answers it."""

    model_config = ConfigDict(json_schema_extra={"examples": [SUMMARY_EXAMPLE]})

    release_no: int
    label: str | None
    method: str
    n_rows: int
    n_clusters: int
    counterfeits: int = Field(
        description="Published counterfeits: every counterfeit row, plus Kanony's global-bag "
        "counterfeit copies"
    )


class DryRunOutcome(BaseModel):
    """A finished dry run's answer: the release it would publish and its risk, nothing stored."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "release": SUMMARY_EXAMPLE,
                    "risk": RiskSummary.model_config["json_schema_extra"]["examples"][0],  # type: ignore
                    "warnings": [],
                }
            ]
        }
    )

    release: ReleaseSummary
    risk: RiskSummary = Field(
        description="As the release's risk would read: every counterfeit row and the "
        "suppressed copies for auditors and admins, the published figures for the others"
    )
    warnings: list[dict[str, str]] = Field(
        default_factory=list, description="As a publication's answer says them (PublishResult)"
    )


class Interruption(BaseModel):
    """A run of the job that ended without a result (the job went back to the queue), or an
    outage of the database that a step of the job waited out and ran again after."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"at": "2025-01-01T00:00:31Z", "reason": "worker_restarted", "attempt": 1},
                {
                    "at": "2025-01-01T00:02:10Z",
                    "reason": "database_outage",
                    "attempt": 2,
                    "step": "store",
                    "error": "AdminShutdown",
                },
            ]
        }
    )

    at: dt.datetime
    reason: Literal[
        "worker_restarted",
        "worker_stalled",
        "worker_shutdown",
        "queue_lost",
        "database_outage",
        "compute_killed",
    ] = Field(
        description="worker_restarted: the process running it crashed and was restarted; "
        "worker_stalled: its worker stopped sending heartbeats; "
        "worker_shutdown: its worker was stopped (SIGTERM) before it finished; "
        "queue_lost: the job queue ended the run without the job recording its outcome; "
        "database_outage: the database went away during `step` (a restart, a failover, "
        "a cut connection) and the step ran again once it answered; "
        "compute_killed: the process computing it was killed by `signal` (SIGKILL: an "
        "out-of-memory kill, or kill -9)"
    )
    attempt: int
    step: str | None = Field(
        None,
        description="database_outage: the step that ran again (start, lock, load, "
        "store, fail, finish)",
    )
    error: str | None = Field(None, description="database_outage: the fault's class")
    signal: str | None = Field(
        None, description="compute_killed: the signal that killed it (`SIGKILL`)"
    )


class JobOut(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "id": "0b6f5c1e-9d7a-4c57-8f0e-3c1d2a9b8e71",
                    "series": "prison-health",
                    "status": "running",
                    "phase": "fp1",
                    "progress": 0.42,
                    "release_no": None,
                    "error": None,
                    "created_at": "2025-01-01T00:00:00Z",
                    "finished_at": None,
                }
            ]
        }
    )

    id: uuid.UUID
    series: str
    status: Literal["queued", "running", "succeeded", "failed"]
    phase: str | None = Field(
        description="The phase running now: prepare (the uploaded snapshot decoded into "
        "transactions and validated, in the compute child), anony, bp, fp1, fp2, "
        "verify (the checked post-condition and its repair), store (the release "
        "written), attack (the semantic audit, when the series asks for one)"
    )
    progress: float
    release_no: int | None
    error: dict[str, Any] | None
    created_at: dt.datetime
    finished_at: dt.datetime | None
    attempts: int = Field(0, description="Runs started so far")
    interruptions: list[Interruption] = Field(
        default_factory=list, description="Runs that ended without a result, oldest first"
    )
    cancel_requested: bool = Field(False, description="DELETE /v1/jobs/{id} was called")
    report: dict[str, Any] | None = Field(
        None,
        description="Auditors and admins only: the mechanism's report (counterfeit rows by "
        "phase, suppressed copies, timings) and, for methods that publish rows, "
        "private_copies: true and published copies of the private terms, their L1 "
        "distortion, net, the terms off by more than max(3 copies, 20%) and the worst terms",
    )
    phase_seconds: dict[str, float] | None = Field(
        None,
        description="Auditors and admins only: seconds per phase, in order: "
        "upload+parse (the API receiving and parsing the body), load (the "
        "series' history from the worker's cache or PostgreSQL), prepare, "
        "the core's phases (anony, bp, fp1, fp2, verify), ipc (the hand-off "
        "to the compute child and back beyond those), store, attack",
    )
    warnings: list[dict[str, str]] = Field(
        default_factory=list,
        description="publisher_seed when the series' params.seed is set: every random "
        "choice of the release follows from it (tests and benchmarks only); in the 202 of a "
        "post, the warnings about its terms (term_folds_onto_private_term, "
        "private_term_not_in_snapshot) against the series' private terms of then; once "
        "the job succeeded, its report's warnings (the same about terms, as the job found "
        "them; private_term_published_earlier: "
        "the release made private a term earlier releases printed in clear; "
        "disclosing_population_rate: a private term's published population rate is 0.5 or "
        "more, so the rate alone discloses it; escalated: the repair and the suppression "
        "budget were not enough and the release was published with counterfeits carrying "
        "a private term where published clusters certify it, coarser clusters or "
        "suppression beyond the budget, params.on_infeasible, report.escalation)",
    )
    suppressed: dict[str, int] | None = Field(
        None,
        description="Copies of each private term suppressed as the last resort (design.md §5), for "
        "the publisher that posted the job, auditors and admins; never in the public release",
    )
    dry_run: bool = Field(
        False, description="A dry run (dry_run=true): computed like a publication, nothing stored"
    )
    result: DryRunOutcome | None = Field(
        None,
        description="A dry run that succeeded: the release it would publish and its risk; "
        "null for publications and while the dry run runs",
    )

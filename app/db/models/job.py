"""Publication jobs, their transient input and idempotency keys."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    LargeBinary,
    String,
    Text,
    false,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base, TimestampMixin


class Job(TimestampMixin, Base):
    __tablename__ = "jobs"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    series_id: Mapped[int] = mapped_column(ForeignKey("series.id", ondelete="CASCADE"), index=True)
    #: The key that posted it (publishers may read their own jobs).
    api_key_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("api_keys.id", ondelete="SET NULL")
    )
    procrastinate_job_id: Mapped[int | None] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(20), default="queued")
    phase: Mapped[str | None] = mapped_column(String(20))
    progress: Mapped[float] = mapped_column(Float, default=0.0)
    label: Mapped[str | None] = mapped_column(Text)
    extra_private_terms: Mapped[list[str]] = mapped_column(ARRAY(Text), default=list)
    n_transactions: Mapped[int] = mapped_column(Integer, default=0)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    release_no: Mapped[int | None] = mapped_column(Integer)
    error: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    #: The core's report (private: counterfeits by phase); auditors and admins only.
    report: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    phase_seconds: Mapped[dict[str, float]] = mapped_column(JSONB, default=dict)
    started_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    #: The process running it (host, pid, its start time): after a crash, a restart on the
    #: same host recognises its own jobs without waiting for the heartbeat to go stale.
    worker_host: Mapped[str | None] = mapped_column(Text)
    worker_pid: Mapped[int | None] = mapped_column(Integer)
    worker_started: Mapped[float | None] = mapped_column(Float)
    #: Set by ``DELETE /v1/jobs/{id}``: the worker then fails the job instead of requeueing it.
    cancel_requested_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    #: Runs that ended without a result (worker restarted, stalled or shut down), oldest first:
    #: ``[{"at", "reason", "attempt"}]``.
    interruptions: Mapped[list[dict[str, Any]]] = mapped_column(
        JSONB, default=list, server_default="[]"
    )
    #: A dry run (``POST …/releases?dry_run=true``): computed like a publication, in the
    #: worker, and never stored as a release; its answer is kept in ``result``.
    dry_run: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    #: A finished dry run's answer: ``{"release", "risk": {"public", "private"},
    #: "warnings"}`` (app.jobs.dry_run); ``None`` for a publication.
    result: Mapped[dict[str, Any] | None] = mapped_column(JSONB)


class JobInput(Base):
    """The corpus a queued job will publish (individuals already keyed); deleted when it ends.

    Raw snapshots are not kept: this row lives only between the POST and the end of the job.
    """

    __tablename__ = "job_inputs"

    job_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True
    )
    payload: Mapped[bytes] = mapped_column(LargeBinary)


class IdempotencyKey(TimestampMixin, Base):
    """An ``Idempotency-Key`` as one API key used it: keys are the client's names, so two
    publishers may pick the same one, and neither may get the other's job back."""

    __tablename__ = "idempotency_keys"

    api_key_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("api_keys.id", ondelete="CASCADE"), primary_key=True
    )
    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    series_id: Mapped[int] = mapped_column(ForeignKey("series.id", ondelete="CASCADE"))
    body_hash: Mapped[str] = mapped_column(String(64))
    job_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"))

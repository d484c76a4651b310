"""The semantic audit (design.md §11): a series' background corpus and the reports its publication
jobs kept (auditors and admins only). The settings are the series parameter
``semantic_audit``, kept with the other parameters."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import BigInteger, DateTime, Float, ForeignKey, Integer, LargeBinary, func
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base, TimestampMixin


class AuditBackground(Base):
    """The background corpus uploaded for a series: a :mod:`app.io.compact` payload, like a
    queued job's input. One per series; an upload replaces it."""

    __tablename__ = "audit_backgrounds"

    series_id: Mapped[int] = mapped_column(
        ForeignKey("series.id", ondelete="CASCADE"), primary_key=True
    )
    payload: Mapped[bytes] = mapped_column(LargeBinary)
    n_transactions: Mapped[int] = mapped_column(Integer)
    uploaded_at: Mapped[dt.datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), nullable=False
    )


class AttackReport(TimestampMixin, Base):
    """The report of the audit run by the job that published the release (aggregates only)."""

    __tablename__ = "attack_reports"

    release_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("releases.id", ondelete="CASCADE"), primary_key=True
    )
    report: Mapped[dict[str, Any]] = mapped_column(JSONB)
    seconds: Mapped[float] = mapped_column(Float)

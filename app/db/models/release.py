"""Published releases (public) and their ledgers (private).

Rows are stored as arrays of term ids (``terms`` is the dictionary) with a 64-bit hash of the
row's terms. The hash is not indexed: no query reads it, and the index was 40% of the rows'
``COPY`` (migration 0017). Rows, clusters and ledgers are written with ``COPY`` (see
:mod:`app.db.bulk`), never row by row.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    DateTime,
    ForeignKey,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base, TimestampMixin


class Term(Base):
    __tablename__ = "terms"

    id: Mapped[int] = mapped_column(primary_key=True)
    term: Mapped[str] = mapped_column(Text, unique=True)


class Release(TimestampMixin, Base):
    __tablename__ = "releases"
    __table_args__ = (UniqueConstraint("series_id", "release_no"),)

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    series_id: Mapped[int] = mapped_column(ForeignKey("series.id", ondelete="CASCADE"))
    release_no: Mapped[int] = mapped_column(Integer)
    label: Mapped[str | None] = mapped_column(Text)
    method: Mapped[str] = mapped_column(String(20))
    params: Mapped[dict[str, Any]] = mapped_column(JSONB)
    private_terms: Mapped[list[str]] = mapped_column(ARRAY(Text))
    n_rows: Mapped[int] = mapped_column(Integer)
    n_clusters: Mapped[int] = mapped_column(Integer)
    population_rates: Mapped[dict[str, float]] = mapped_column(JSONB)
    global_bag: Mapped[dict[str, int]] = mapped_column(JSONB)
    global_counterfeits: Mapped[int] = mapped_column(Integer, default=0)
    #: Every counterfeit row of the release (public; NULL for releases stored before 0013).
    counterfeit_rows: Mapped[int | None] = mapped_column(Integer, nullable=True)
    #: Public: the release escalated to suppression beyond the budget.
    suppression_beyond_budget: Mapped[bool] = mapped_column(Boolean, default=False)
    job_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("jobs.id", ondelete="SET NULL"))
    #: Withdrawn by an admin (docs/api-releases.md,
    #: "POST /v1/series/{name}/releases/{release_no}/withdraw"):
    #: no longer served to analysts and publishers, still in the history every later release
    #: is judged against (it was public). ``None``: not withdrawn.
    withdrawn_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    withdrawal_reason: Mapped[str | None] = mapped_column(Text)
    #: The admin key that withdrew it.
    withdrawn_by: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("api_keys.id", ondelete="SET NULL")
    )


class Cluster(Base):
    __tablename__ = "clusters"
    __table_args__ = (UniqueConstraint("release_id", "position"),)

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    release_id: Mapped[int] = mapped_column(ForeignKey("releases.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    cluster_id: Mapped[str] = mapped_column(Text)
    n_rows: Mapped[int] = mapped_column(Integer)
    private_counts: Mapped[dict[str, int]] = mapped_column(JSONB)
    global_share: Mapped[dict[str, int]] = mapped_column(JSONB)
    #: Counterfeit rows added by BP + FP1 (public, design.md §3).
    counterfeits: Mapped[int] = mapped_column(Integer, default=0)


class PublishedRow(Base):
    """One published row, reached through its cluster (the primary key's prefix).

    Deliberately without foreign keys: a foreign-key check takes a row lock on the cluster
    per inserted row, which tripled the cost of the bulk insert. Rows are written only by
    :func:`app.db.repositories.release_store.store_publication`, in the same transaction as
    their cluster, and never updated.
    """

    __tablename__ = "published_rows"

    cluster_pk: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    term_ids: Mapped[list[int]] = mapped_column(ARRAY(Integer))
    terms_hash: Mapped[int] = mapped_column(BigInteger)


class ReleaseLedger(Base):
    """Private: global-bag counterfeits and suppressed copies of a release."""

    __tablename__ = "release_ledgers"

    release_id: Mapped[int] = mapped_column(
        ForeignKey("releases.id", ondelete="CASCADE"), primary_key=True
    )
    global_bag_counterfeits: Mapped[dict[str, int]] = mapped_column(JSONB, default=dict)
    suppressed: Mapped[dict[str, int]] = mapped_column(JSONB, default=dict)
    #: Where the release's random choices came from, enough to reproduce it: the secret
    #: drawn for it, or the publisher's seed (app.core.randomness). Never published.
    randomness: Mapped[dict[str, Any]] = mapped_column(
        JSONB, default=dict, server_default=text("'{}'::jsonb")
    )


class ClusterLedger(Base):
    """Private: which rows are counterfeits, the BP/FP1/FP2 split and row individuals (keyed)."""

    __tablename__ = "cluster_ledgers"

    cluster_pk: Mapped[int] = mapped_column(
        ForeignKey("clusters.id", ondelete="CASCADE"), primary_key=True
    )
    #: Denormalised for loading by release; checked through ``cluster_pk``.
    release_id: Mapped[int] = mapped_column(BigInteger, index=True)
    counterfeit_rows: Mapped[list[int]] = mapped_column(ARRAY(Integer))
    bp: Mapped[int] = mapped_column(Integer)
    fp1: Mapped[int] = mapped_column(Integer)
    fp2: Mapped[int] = mapped_column(Integer)
    individuals: Mapped[list[str | None]] = mapped_column(ARRAY(Text))
    #: Copies suppressed from this cluster's segment (design.md §5, the last resort; private).
    suppressed: Mapped[dict[str, int]] = mapped_column(
        JSONB, default=dict, server_default=text("'{}'::jsonb")
    )


class ReleasePack(Base):
    """A release and its ledger as a job's compute child receives them
    (:func:`app.jobs.handoff.pack_release`, the child's own bytes), in chunks of at most
    :data:`app.db.repositories.release_packs.PACK_CHUNK` bytes.

    The series' next job hands these bytes on as they are, instead of reading the release's
    rows and ledger into objects and pickling them again: at 10,000,000 lines a release that
    way cost the worker 10-45 s of ``load`` and up to 5.5 GiB. Private (the
    ledger is in it), like :class:`ReleaseLedger`; dropped with its release.
    """

    __tablename__ = "release_packs"

    release_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("releases.id", ondelete="CASCADE"), primary_key=True
    )
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)

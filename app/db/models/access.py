"""The access trail: who read or published what, and when (docs/deploy.md, "The access trail").

One row per operation on a series' releases, their risk, covers, ledgers and on keys, written
in batches off the request path (:mod:`app.services.access_trail`). It names the key by its id,
never by the key, and outlives what it names: no foreign key, so neither a deleted series nor
a revoked key takes its rows along.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from sqlalchemy import BigInteger, DateTime, Index, Integer, SmallInteger, String, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base


class AccessEvent(Base):
    __tablename__ = "access_events"
    __table_args__ = (
        Index("ix_access_events_key_id_at", "key_id", "at"),
        Index("ix_access_events_series_at", "series", "at"),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    #: When the request arrived.
    at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), index=True)
    #: The key that made the request (``None``: the command line, which uses no key).
    key_id: Mapped[uuid.UUID | None] = mapped_column()
    role: Mapped[str] = mapped_column(String(20))
    #: What was done (:class:`app.services.access_trail.AccessAction`).
    action: Mapped[str] = mapped_column(String(40))
    series: Mapped[str | None] = mapped_column(String(200))
    release_no: Mapped[int | None] = mapped_column(Integer)
    #: The HTTP status answered (a refused attempt is recorded too).
    status: Mapped[int] = mapped_column(SmallInteger)
    #: What else identifies the operation: the key created, revoked or rotated, a dry run.
    details: Mapped[dict[str, Any]] = mapped_column(
        JSONB, default=dict, server_default=text("'{}'::jsonb")
    )
    #: Identical requests (same key, action, series, release and status) within one write
    #: interval of the process that served them: one row, ``at`` the first one's time.
    requests: Mapped[int] = mapped_column(Integer, default=1, server_default=text("1"))

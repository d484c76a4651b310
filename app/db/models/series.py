"""A series: one publisher's sequence of releases under one method."""

from __future__ import annotations

from typing import Any

from sqlalchemy import String, Text
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base, TimestampMixin


class Series(TimestampMixin, Base):
    __tablename__ = "series"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    method: Mapped[str] = mapped_column(String(20))
    #: Declared private terms; grows with the extra private terms of later releases.
    private_terms: Mapped[list[str]] = mapped_column(ARRAY(Text), default=list)
    #: How a term is matched against the private terms: "casefold" (the default: case,
    #: width, accents and look-alike letters aside, app.core.spelling.fold) or "exact" (the
    #: NFC spelling, and the spellings that look the same).
    private_match: Mapped[str] = mapped_column(String(10), server_default="casefold")
    #: Parameters as validated (raw); the effective values are derived from them.
    params: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)

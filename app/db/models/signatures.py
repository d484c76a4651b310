"""Inv's signatures (m-invariance, design.md §9), keyed by an HMAC of the pseudonym."""

from __future__ import annotations

from sqlalchemy import ForeignKey, String, Text
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base


class InvSignature(Base):
    """The sensitive values (``""`` for NULL) every cluster of the individual must hold."""

    __tablename__ = "inv_signatures"

    series_id: Mapped[int] = mapped_column(
        ForeignKey("series.id", ondelete="CASCADE"), primary_key=True
    )
    individual_key: Mapped[str] = mapped_column(String(64), primary_key=True)
    signature: Mapped[list[str]] = mapped_column(ARRAY(Text))

"""Wong's statistics file m(o, s), keyed by an HMAC of the pseudonym (design.md §6)."""

from __future__ import annotations

from sqlalchemy import ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base


class WongStatistic(Base):
    """One ``(n_j, n_{j,s})`` entry of m(o, s) for release ``release_no``."""

    __tablename__ = "wong_statistics"

    series_id: Mapped[int] = mapped_column(
        ForeignKey("series.id", ondelete="CASCADE"), primary_key=True
    )
    individual_key: Mapped[str] = mapped_column(String(64), primary_key=True)
    term: Mapped[str] = mapped_column(Text, primary_key=True)
    release_no: Mapped[int] = mapped_column(Integer, primary_key=True)
    n_j: Mapped[int] = mapped_column(Integer)
    n_js: Mapped[int] = mapped_column(Integer)

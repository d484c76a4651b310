"""Rendered public documents: a release's JSON and NDJSON, a risk summary as of a number of
releases. Stored once as a gzip stream cut into fixed-size chunks, served as bytes.

Only public renderings (and the auditor-only risk summary) are kept here: never a ledger.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, ForeignKey, Integer, LargeBinary, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base, TimestampMixin


class RenderedDocument(TimestampMixin, Base):
    """One rendering of one release, named by ``key`` (``release.json``, ``risk/3/2.0``…)."""

    __tablename__ = "rendered_documents"
    __table_args__ = (UniqueConstraint("release_id", "key"),)

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    release_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("releases.id", ondelete="CASCADE")
    )
    key: Mapped[str] = mapped_column(Text)
    media_type: Mapped[str] = mapped_column(Text)
    #: sha256 (hex, 32 characters) of the identity bytes: the strong validator.
    etag: Mapped[str] = mapped_column(Text)
    identity_size: Mapped[int] = mapped_column(BigInteger)
    gzip_size: Mapped[int] = mapped_column(BigInteger)
    #: Every chunk but the last holds exactly this many bytes of the gzip stream, so that a
    #: byte range maps to chunk numbers without reading the others.
    chunk_bytes: Mapped[int] = mapped_column(Integer)
    n_chunks: Mapped[int] = mapped_column(Integer)


class RenderedChunk(Base):
    __tablename__ = "rendered_chunks"

    document_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("rendered_documents.id", ondelete="CASCADE"), primary_key=True
    )
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)

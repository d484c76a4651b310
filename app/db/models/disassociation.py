"""Disassociation's public layout (design.md §11): a release's clusters, joint clusters and header.

Kept as JSON documents, one per cluster, in the release's transaction: the layout is only ever
read whole (to render the release, or by an auditor's attack), and a cluster's chunks are
small (the cluster is under ``max_cluster_size`` records).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ForeignKey, Integer, String
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base


class DisassociationPart(Base):
    """One part of a disassociated release: ``kind`` ``header`` (``k``, ``m``), ``cluster``
    or ``joint`` (a joint cluster), in publication order by ``position``."""

    __tablename__ = "disassociation_parts"

    release_id: Mapped[int] = mapped_column(
        ForeignKey("releases.id", ondelete="CASCADE"), primary_key=True
    )
    kind: Mapped[str] = mapped_column(String(8), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    body: Mapped[dict[str, Any]] = mapped_column(JSONB)

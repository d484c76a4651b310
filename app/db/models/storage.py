"""Whether PostgreSQL last refused a write for lack of space: one row every process reads.

The API and a ``serialpub worker`` are separate processes (docs/deploy.md): a full disk one of
them meets must be seen by the other's ``/readyz`` and ``/metrics``, and cleared by whichever
stores a release next (:class:`app.db.engine.StorageState`). The row is written when a write
fails for lack of space, so the table is kept nearly empty on its one page (``fillfactor``
10): an update of the row finds room on the page it is on, and needs no file extension that
the full disk would refuse.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import CheckConstraint, DateTime, SmallInteger, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base


class StorageState(Base):
    __tablename__ = "storage_state"
    # ``fillfactor`` 10 is set by its migration (SQLAlchemy's tables take no storage
    # parameters).
    __table_args__ = (CheckConstraint("id = 1", name="one_row"),)

    #: Always 1: the service has one database, so one state.
    id: Mapped[int] = mapped_column(SmallInteger, primary_key=True, autoincrement=False)
    #: When a write last failed for lack of space (the database's clock); ``None`` since a
    #: release was stored after it.
    full_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    #: What failed to be written (``publication store``, ``request``), for the operator.
    what: Mapped[str] = mapped_column(Text, server_default=text("''"))

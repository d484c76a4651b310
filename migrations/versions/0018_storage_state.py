"""storage state: a full disk seen by every process

``/readyz`` and ``serialpub_storage_full`` read whether PostgreSQL last refused a write for
lack of space. That was each process' memory: with a separate ``serialpub worker`` (the
documented deployment) the API said ready right after the worker's store failed, and said
``storage_full`` for 5 minutes after its own write failed although the worker had stored a
release since. One row, kept on one nearly empty page (``fillfactor`` 10) so that recording
a full disk needs no new page.

Revision ID: 0018_storage_state
Revises: 0017_rows_without_hash_index
Create Date: 2026-12-04 12:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018_storage_state"
down_revision: str | None = "0017_rows_without_hash_index"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "storage_state",
        sa.Column("id", sa.SmallInteger(), nullable=False),
        sa.Column("full_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("what", sa.Text(), server_default=sa.text("''"), nullable=False),
        sa.CheckConstraint("id = 1", name=op.f("ck_storage_state_one_row")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_storage_state")),
    )
    op.execute("ALTER TABLE storage_state SET (fillfactor = 10)")


def downgrade() -> None:
    op.drop_table("storage_state")

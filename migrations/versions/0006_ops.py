"""jobs: the running process, cancellation requests and interruptions

Revision ID: 0004_ops
Revises: 0003
Create Date: 2026-11-23 07:15:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0004_ops"
down_revision: str | None = "0004_reads"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("worker_host", sa.Text(), nullable=True))
    op.add_column("jobs", sa.Column("worker_pid", sa.Integer(), nullable=True))
    op.add_column("jobs", sa.Column("worker_started", sa.Float(), nullable=True))
    op.add_column("jobs", sa.Column("cancel_requested_at", sa.DateTime(timezone=True),
                                    nullable=True))
    op.add_column("jobs", sa.Column("interruptions", postgresql.JSONB(astext_type=sa.Text()),
                                    server_default="[]", nullable=False))


def downgrade() -> None:
    for column in ("interruptions", "cancel_requested_at", "worker_started", "worker_pid",
                   "worker_host"):
        op.drop_column("jobs", column)

"""cluster ledgers: copies suppressed per cluster (SPEC 5; the auditors' ledger)

Revision ID: 0007_ledger
Revises: 0004_ops
Create Date: 2026-11-23 08:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0007_ledger"
down_revision: str | None = "0004_ops"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "cluster_ledgers",
        sa.Column("suppressed", postgresql.JSONB(astext_type=sa.Text()), nullable=False,
                  server_default=sa.text("'{}'::jsonb")),
    )


def downgrade() -> None:
    op.drop_column("cluster_ledgers", "suppressed")

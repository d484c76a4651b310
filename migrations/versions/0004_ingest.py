"""series.private_match (issue 10: private terms matched case-insensitively by default)

Revision ID: 0004_ingest
Revises: 0003
Create Date: 2026-11-23 07:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_ingest"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "series",
        sa.Column("private_match", sa.String(length=10), server_default="casefold",
                  nullable=False),
    )


def downgrade() -> None:
    op.drop_column("series", "private_match")

"""inv signatures (m-invariance, SPEC section 9)

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21 21:50:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "inv_signatures",
        sa.Column("series_id", sa.Integer(), nullable=False),
        sa.Column("individual_key", sa.String(length=64), nullable=False),
        sa.Column("signature", postgresql.ARRAY(sa.Text()), nullable=False),
        sa.ForeignKeyConstraint(
            ["series_id"], ["series.id"],
            name=op.f("fk_inv_signatures_series_id_series"), ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("series_id", "individual_key", name=op.f("pk_inv_signatures")),
    )


def downgrade() -> None:
    op.drop_table("inv_signatures")

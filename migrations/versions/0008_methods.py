"""disassociation parts: the public chunk layout of disassociated releases (SPEC 11)

Revision ID: 0008_methods
Revises: 0007_ledger
Create Date: 2026-11-23 09:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0008_methods"
down_revision: str | None = "0007_ledger"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "disassociation_parts",
        sa.Column("release_id", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("body", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.ForeignKeyConstraint(
            ["release_id"], ["releases.id"],
            name=op.f("fk_disassociation_parts_release_id_releases"), ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("release_id", "kind", "position",
                                name=op.f("pk_disassociation_parts")),
    )


def downgrade() -> None:
    op.drop_table("disassociation_parts")

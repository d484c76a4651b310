"""semantic audit (SPEC 11): background corpora, attack reports

Revision ID: 0009_attacks
Revises: 0008_methods
Create Date: 2026-11-23 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0009_attacks"
down_revision: str | None = "0008_methods"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "audit_backgrounds",
        sa.Column("series_id", sa.Integer(), nullable=False),
        sa.Column("payload", sa.LargeBinary(), nullable=False),
        sa.Column("n_transactions", sa.Integer(), nullable=False),
        sa.Column("uploaded_at", sa.DateTime(timezone=True), server_default=sa.text("now()"),
                  nullable=False),
        sa.ForeignKeyConstraint(["series_id"], ["series.id"],
                                name=op.f("fk_audit_backgrounds_series_id_series"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("series_id", name=op.f("pk_audit_backgrounds")),
    )
    op.create_table(
        "attack_reports",
        sa.Column("release_id", sa.BigInteger(), nullable=False),
        sa.Column("report", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("seconds", sa.Float(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"),
                  nullable=False),
        sa.ForeignKeyConstraint(["release_id"], ["releases.id"],
                                name=op.f("fk_attack_reports_release_id_releases"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("release_id", name=op.f("pk_attack_reports")),
    )


def downgrade() -> None:
    op.drop_table("attack_reports")
    op.drop_table("audit_backgrounds")

"""access trail, keys that expire, no raw upload left behind

Nothing recorded which key read or published what, and API keys never expired. The access
trail keeps one row per operation on releases, their risk, covers, ledgers and keys: the
key's id (never the key), its role, the series, the release, the status answered and when.
Keys get an optional expiry, the key that replaced them when rotated, and the time they were
last used. A finished job's transient input is deleted (the service drops it when the job
ends; a row left by an older version is removed here).

Revision ID: 0016_access_trail
Revises: 0015_withdrawals
Create Date: 2026-12-01 12:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0016_access_trail"
down_revision: str | None = "0015_withdrawals"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "access_events",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("key_id", sa.Uuid(), nullable=True),
        sa.Column("role", sa.String(length=20), nullable=False),
        sa.Column("action", sa.String(length=40), nullable=False),
        sa.Column("series", sa.String(length=200), nullable=True),
        sa.Column("release_no", sa.Integer(), nullable=True),
        sa.Column("status", sa.SmallInteger(), nullable=False),
        sa.Column(
            "details",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'{}'::jsonb"),
            nullable=False,
        ),
        sa.Column("requests", sa.Integer(), server_default=sa.text("1"), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_access_events")),
    )
    op.create_index(op.f("ix_access_events_at"), "access_events", ["at"])
    op.create_index("ix_access_events_key_id_at", "access_events", ["key_id", "at"])
    op.create_index("ix_access_events_series_at", "access_events", ["series", "at"])
    op.add_column("api_keys", sa.Column("expires_at", sa.DateTime(timezone=True)))
    op.add_column("api_keys", sa.Column("last_used_at", sa.DateTime(timezone=True)))
    op.add_column("api_keys", sa.Column("replaced_by", sa.Uuid()))
    op.create_foreign_key(
        "fk_api_keys_replaced_by_api_keys",
        "api_keys",
        "api_keys",
        ["replaced_by"],
        ["id"],
        ondelete="SET NULL",
    )
    op.execute(
        "DELETE FROM job_inputs WHERE job_id IN "
        "(SELECT id FROM jobs WHERE status IN ('succeeded', 'failed'))"
    )


def downgrade() -> None:
    op.drop_constraint("fk_api_keys_replaced_by_api_keys", "api_keys", type_="foreignkey")
    op.drop_column("api_keys", "replaced_by")
    op.drop_column("api_keys", "last_used_at")
    op.drop_column("api_keys", "expires_at")
    op.drop_index("ix_access_events_series_at", table_name="access_events")
    op.drop_index("ix_access_events_key_id_at", table_name="access_events")
    op.drop_index(op.f("ix_access_events_at"), table_name="access_events")
    op.drop_table("access_events")

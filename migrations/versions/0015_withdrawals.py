"""withdrawals and dry-run jobs: a release withdrawn by an admin; a dry run as a job

A mistaken upload was permanent: a withdrawn release is no longer served to analysts and
publishers (410), stays in the history every later release is judged against (it was public),
and records when, why and by which admin key it was withdrawn. A dry run runs in the job
worker like a publication (it ran inside the API process: 1.76 GiB at the default caps,
against compose's 1 GiB): its job is marked as one and keeps its answer, never a release.

Revision ID: 0015_withdrawals
Revises: 0014_release_packs
Create Date: 2026-11-27 17:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0015_withdrawals"
down_revision: str | None = "0014_release_packs"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("releases", sa.Column("withdrawn_at", sa.DateTime(timezone=True)))
    op.add_column("releases", sa.Column("withdrawal_reason", sa.Text()))
    op.add_column("releases", sa.Column("withdrawn_by", sa.Uuid()))
    op.create_foreign_key(
        "fk_releases_withdrawn_by_api_keys",
        "releases",
        "api_keys",
        ["withdrawn_by"],
        ["id"],
        ondelete="SET NULL",
    )
    op.add_column(
        "jobs", sa.Column("dry_run", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    op.add_column("jobs", sa.Column("result", postgresql.JSONB()))


def downgrade() -> None:
    op.drop_column("jobs", "result")
    op.drop_column("jobs", "dry_run")
    op.drop_constraint("fk_releases_withdrawn_by_api_keys", "releases", type_="foreignkey")
    op.drop_column("releases", "withdrawn_by")
    op.drop_column("releases", "withdrawal_reason")
    op.drop_column("releases", "withdrawn_at")

"""counterfeit total: a release-level count of every counterfeit row

Issue 20: each cluster again publishes BP + FP1's counterfeits only (design.md §3); FP2's and the
repair's s̄-counterfeits, counted per cluster since issue 19, told an adversary who discounts k
rows per cluster which clusters to un-dilute. Every counterfeit row stays counted in one public
figure, the release's total, kept here. Releases stored before keep NULL and print, as they did,
the sum of their clusters' counts (their clusters' counts are left as they were published).

Revision ID: 0013_counterfeit_total
Revises: 0012_secret_randomness
Create Date: 2026-11-25 21:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013_counterfeit_total"
down_revision: str | None = "0012_secret_randomness"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("releases", sa.Column("counterfeit_rows", sa.Integer(), nullable=True))
    # Issue 20 (escalation): whether a release suppressed copies beyond its budget, public.
    op.add_column(
        "releases",
        sa.Column(
            "suppression_beyond_budget", sa.Boolean(), nullable=False, server_default=sa.false()
        ),
    )


def downgrade() -> None:
    op.drop_column("releases", "suppression_beyond_budget")
    op.drop_column("releases", "counterfeit_rows")

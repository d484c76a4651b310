"""published rows without the index on their hash

``ix_published_rows_terms_hash`` was meant for finding equal non-private sets across
releases; nothing queries it (the core finds overlaps in memory). Its B-tree took a random
insert per published row: measured with the rows of a 1,000,000-line release, the binary
``COPY`` took 1.7 s with it and 1.0 s without, and the index grows with every release. The
column stays (a later index can be built from it).

Revision ID: 0017_rows_without_hash_index
Revises: 0016_access_trail
Create Date: 2026-11-28 12:00:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0017_rows_without_hash_index"
down_revision: str | None = "0016_access_trail"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_index("ix_published_rows_terms_hash", table_name="published_rows")


def downgrade() -> None:
    op.create_index("ix_published_rows_terms_hash", "published_rows", ["terms_hash"], unique=False)

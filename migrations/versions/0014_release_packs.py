"""release packs: each release as its job's compute child packed it

Issue 21 item 2: a series' next job read every earlier release's rows and ledger into objects
and pickled them again for its compute child, unless the worker's cache held them, which it
never does past ``SERIALPUB_RELEASE_CACHE_ROWS`` rows a release: at 10,000,000 lines that was
10-45 s of ``load`` per job and up to 5.5 GiB in the worker. The child's own bytes are kept
here, in chunks, and handed on as they are. Stored without compression (``EXTERNAL``): the
pickle is compact already, and pglz on hundreds of megabytes would only cost time. Releases
stored before have no pack: their jobs read them as before.

Revision ID: 0014_release_packs
Revises: 0013_counterfeit_total
Create Date: 2026-11-26 09:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014_release_packs"
down_revision: str | None = "0013_counterfeit_total"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "release_packs",
        sa.Column(
            "release_id",
            sa.BigInteger(),
            sa.ForeignKey("releases.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("seq", sa.Integer(), primary_key=True),
        sa.Column("data", sa.LargeBinary(), nullable=False),
    )
    op.execute("ALTER TABLE release_packs ALTER COLUMN data SET STORAGE EXTERNAL")


def downgrade() -> None:
    op.drop_table("release_packs")

"""rendered documents: releases and risk summaries served as stored bytes

Revision ID: 0004_reads
Revises: 0003
Create Date: 2026-11-23 07:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_reads"
down_revision: str | None = "0004_ingest"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "rendered_documents",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("release_id", sa.BigInteger(), nullable=False),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("media_type", sa.Text(), nullable=False),
        sa.Column("etag", sa.Text(), nullable=False),
        sa.Column("identity_size", sa.BigInteger(), nullable=False),
        sa.Column("gzip_size", sa.BigInteger(), nullable=False),
        sa.Column("chunk_bytes", sa.Integer(), nullable=False),
        sa.Column("n_chunks", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"),
                  nullable=False),
        sa.ForeignKeyConstraint(
            ["release_id"], ["releases.id"],
            name=op.f("fk_rendered_documents_release_id_releases"), ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rendered_documents")),
        sa.UniqueConstraint("release_id", "key", name=op.f("uq_rendered_documents_release_id")),
    )
    op.create_table(
        "rendered_chunks",
        sa.Column("document_id", sa.BigInteger(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["document_id"], ["rendered_documents.id"],
            name=op.f("fk_rendered_chunks_document_id_rendered_documents"), ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("document_id", "seq", name=op.f("pk_rendered_chunks")),
    )
    # The chunks are compressed already: no second (TOAST) compression, fetched as they are.
    op.execute("ALTER TABLE rendered_chunks ALTER COLUMN data SET STORAGE EXTERNAL")


def downgrade() -> None:
    op.drop_table("rendered_chunks")
    op.drop_table("rendered_documents")

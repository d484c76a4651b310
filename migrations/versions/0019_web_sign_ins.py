"""the web view's sign-ins

A web session was a signed token only: signing out cleared the cookie, and a copy of it
still read the pages for up to 8 hours. Each sign-in is now a row that the cookie names:
signing out deletes it, and it is read with its key, so that the key's revocation, expiry or
rotation ends it at once.

Revision ID: 0019_web_sign_ins
Revises: 0018_storage_state
Create Date: 2026-12-02 12:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019_web_sign_ins"
down_revision: str | None = "0018_storage_state"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "web_sign_ins",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("key_id", sa.Uuid(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["key_id"],
            ["api_keys.id"],
            name=op.f("fk_web_sign_ins_key_id_api_keys"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_web_sign_ins")),
    )
    op.create_index(op.f("ix_web_sign_ins_key_id"), "web_sign_ins", ["key_id"])
    op.create_index(op.f("ix_web_sign_ins_expires_at"), "web_sign_ins", ["expires_at"])


def downgrade() -> None:
    op.drop_index(op.f("ix_web_sign_ins_expires_at"), table_name="web_sign_ins")
    op.drop_index(op.f("ix_web_sign_ins_key_id"), table_name="web_sign_ins")
    op.drop_table("web_sign_ins")

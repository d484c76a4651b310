"""idempotency keys are scoped by the API key that used them

An ``Idempotency-Key`` is a name the client picks; two publishers picking the same one got
each other's job back. The key is now (API key, Idempotency-Key). Existing keys take the API
key of the job they answered; keys whose job has none (its API key was deleted) cannot be
attributed and are dropped: replaying one creates a new job, as for an unknown key.

Revision ID: 0011_idempotency_scope
Revises: 0010_audit
Create Date: 2026-11-25 12:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011_idempotency_scope"
down_revision: str | None = "0010_audit"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("idempotency_keys", sa.Column("api_key_id", sa.Uuid(), nullable=True))
    op.execute(
        "UPDATE idempotency_keys AS i SET api_key_id = j.api_key_id "
        "FROM jobs AS j WHERE j.id = i.job_id"
    )
    op.execute("DELETE FROM idempotency_keys WHERE api_key_id IS NULL")
    op.alter_column("idempotency_keys", "api_key_id", nullable=False)
    op.drop_constraint("pk_idempotency_keys", "idempotency_keys", type_="primary")
    op.create_primary_key("pk_idempotency_keys", "idempotency_keys", ["api_key_id", "key"])
    op.create_foreign_key(
        op.f("fk_idempotency_keys_api_key_id_api_keys"), "idempotency_keys", "api_keys",
        ["api_key_id"], ["id"], ondelete="CASCADE",
    )


def downgrade() -> None:
    # One row per Idempotency-Key again: of keys two API keys shared, the oldest is kept.
    op.execute(
        "DELETE FROM idempotency_keys AS i USING idempotency_keys AS o "
        "WHERE i.key = o.key AND (o.created_at, o.api_key_id) < (i.created_at, i.api_key_id)"
    )
    op.drop_constraint(
        op.f("fk_idempotency_keys_api_key_id_api_keys"), "idempotency_keys", type_="foreignkey"
    )
    op.drop_constraint("pk_idempotency_keys", "idempotency_keys", type_="primary")
    op.create_primary_key("pk_idempotency_keys", "idempotency_keys", ["key"])
    op.drop_column("idempotency_keys", "api_key_id")

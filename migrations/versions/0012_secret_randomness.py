"""secret randomness: the ledger records it, public params no longer print a seed

Every random choice of a release (counterfeits, their placement) now comes from a secret drawn
per release, or from a publisher-given seed (tests, benchmarks). ``release_ledgers.randomness``
(private) records which, enough to reproduce the release. The public ``params`` of stored
releases lose their ``seed``: whoever reads it can replay the placement of the counterfeits of
the releases it was used for (issue 18). Their stored renderings are dropped with it and are
rendered again, without the seed, on their first read.

Revision ID: 0012_secret_randomness
Revises: 0011_idempotency_scope
Create Date: 2026-11-25 12:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0012_secret_randomness"
down_revision: str | None = "0011_idempotency_scope"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "release_ledgers",
        sa.Column("randomness", JSONB, nullable=False, server_default=sa.text("'{}'::jsonb")),
    )
    # The ledger learns what the releases used: the seed they printed (every Anony-family
    # release printed one, 0 by default). A release that printed none drew nothing at random
    # (disassociation) and keeps an empty record.
    op.execute(
        "UPDATE release_ledgers AS l SET randomness = jsonb_build_object("
        "'source', 'publisher_seed', 'seed', (r.params->>'seed')::bigint) "
        "FROM releases AS r WHERE r.id = l.release_id AND r.params ? 'seed'"
    )
    op.execute(
        "DELETE FROM rendered_documents WHERE release_id IN "
        "(SELECT id FROM releases WHERE params ? 'seed')"
    )
    op.execute(
        "UPDATE releases SET params = (params - 'seed') || "
        "jsonb_build_object('randomness', 'publisher_seed') WHERE params ? 'seed'"
    )


def downgrade() -> None:
    # The seed each release used goes back into its public params (the code before this
    # revision prints it), and the renderings are dropped so that they print it again.
    op.execute(
        "UPDATE releases AS r SET params = (r.params - 'randomness') || jsonb_build_object("
        "'seed', coalesce((l.randomness->>'seed')::bigint, 0)) "
        "FROM release_ledgers AS l WHERE l.release_id = r.id AND r.params ? 'randomness'"
    )
    op.execute(
        "DELETE FROM rendered_documents WHERE release_id IN "
        "(SELECT id FROM releases WHERE params ? 'seed')"
    )
    op.drop_column("release_ledgers", "randomness")

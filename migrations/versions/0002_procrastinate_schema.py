"""procrastinate job queue schema (procrastinate 3.x)

The queue lives in the same database as the service so that a job is deferred in the same
transaction as the job row that describes it. Later procrastinate releases ship SQL migrations
(``procrastinate schema --migrations-path``); add them here as new revisions when upgrading.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21 21:15:00
"""

from collections.abc import Sequence

from alembic import op
from procrastinate.schema import SchemaManager

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TABLES = ("procrastinate_events", "procrastinate_periodic_defers", "procrastinate_jobs",
           "procrastinate_workers")


def upgrade() -> None:
    # Straight to psycopg without parameters: the schema holds '%' characters that a
    # parameterised execute would read as placeholders. Same connection, same transaction.
    driver_connection = op.get_bind().connection.driver_connection
    assert driver_connection is not None
    driver_connection.execute(SchemaManager.get_schema())


def downgrade() -> None:
    for table in _TABLES:
        op.execute(f"DROP TABLE IF EXISTS {table} CASCADE")
    op.execute(
        "DO $$ DECLARE r record; BEGIN "
        "FOR r IN SELECT oid::regprocedure AS f FROM pg_proc WHERE proname LIKE 'procrastinate%' "
        "LOOP EXECUTE 'DROP FUNCTION IF EXISTS ' || r.f || ' CASCADE'; END LOOP; "
        "FOR r IN SELECT typname FROM pg_type WHERE typname LIKE 'procrastinate%' AND typtype IN "
        "('e', 'c') LOOP EXECUTE 'DROP TYPE IF EXISTS ' || r.typname || ' CASCADE'; END LOOP; END $$"
    )

"""disassociation releases count their records (n_rows) and clusters (n_clusters)

Releases of a method with its own layout were stored with the counts of their (empty)
Anony-style clusters, 0 and 0; the release list showed them so. Their layout is in
``disassociation_parts``: each cluster's part carries its ``size``.

Revision ID: 0010_audit
Revises: 0009_attacks
Create Date: 2026-11-23 12:00:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0010_audit"
down_revision: str | None = "0009_attacks"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "UPDATE releases AS r SET n_rows = p.records, n_clusters = p.clusters "
        "FROM (SELECT release_id, sum((body->>'size')::int) AS records, count(*) AS clusters "
        "      FROM disassociation_parts WHERE kind = 'cluster' GROUP BY release_id) AS p "
        "WHERE r.id = p.release_id"
    )


def downgrade() -> None:
    # What the code before this revision writes, so that a downgraded database agrees with
    # the code it runs with.
    op.execute(
        "UPDATE releases SET n_rows = 0, n_clusters = 0 "
        "WHERE id IN (SELECT release_id FROM disassociation_parts)"
    )

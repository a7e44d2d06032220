"""A rater may skip a step: the assignment keeps when it was skipped.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add ``assignments.skipped_at`` (null: not skipped)."""
    with op.batch_alter_table("assignments") as table:
        table.add_column(sa.Column("skipped_at", sa.DateTime(), nullable=True))


def downgrade() -> None:
    """Drop ``assignments.skipped_at``."""
    with op.batch_alter_table("assignments") as table:
        table.drop_column("skipped_at")

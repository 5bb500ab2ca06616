"""A reassessment's status holds every value it can take: `awaiting_approval` is 17
characters and the column was 16 (PostgreSQL refused the write; SQLite ignores lengths).

Revision ID: 0016
Revises: 0015
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | Sequence[str] | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("reassessments") as table:
        table.alter_column(
            "status", existing_type=sa.String(16), type_=sa.String(32), existing_nullable=False
        )


def downgrade() -> None:
    with op.batch_alter_table("reassessments") as table:
        table.alter_column(
            "status", existing_type=sa.String(32), type_=sa.String(16), existing_nullable=False
        )

"""Dead letters are resolved: by their step succeeding later, or by an operator.

Revision ID: 0006
Revises: 0005
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("dead_letters") as table:
        table.add_column(sa.Column("resolved_at", sa.DateTime(timezone=True), nullable=True))
        table.add_column(sa.Column("resolved_by", sa.String(length=256), nullable=True))
        table.add_column(sa.Column("resolution", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("dead_letters") as table:
        table.drop_column("resolution")
        table.drop_column("resolved_by")
        table.drop_column("resolved_at")

"""A roster person's telephone number: FedRAMP's assessment plan asks for the assessment
lead's.

Revision ID: 0024
Revises: 0023
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0024"
down_revision: str | Sequence[str] | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("roster_people") as table:
        table.add_column(sa.Column("telephone", sa.String(length=40), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("roster_people") as table:
        table.drop_column("telephone")

"""An assessment's roster: the people who own, approve and run its controls, and the
append-only record of every change to it.

Revision ID: 0019
Revises: 0018
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0019"
down_revision: str | Sequence[str] | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(JSONB(), "postgresql")
_BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "roster_people",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("assessment_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=True),
        sa.Column("principal", sa.String(length=256), nullable=True),
        sa.Column("roles", _JSON, nullable=False),
        sa.Column("title", sa.String(length=200), nullable=True),
        sa.Column("domains", _JSON, nullable=False),
        sa.Column("added_by", sa.String(length=256), nullable=False),
        sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["assessment_id"], ["assessments.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_roster_people_assessment", "roster_people", ["assessment_id", "added_at"])
    op.create_table(
        "roster_events",
        sa.Column("id", _BIG_ID, autoincrement=True, nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("assessment_id", sa.Uuid(), nullable=False),
        sa.Column("person_id", sa.Uuid(), nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("actor_id", sa.String(length=256), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("person", _JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_roster_events_assessment", "roster_events", ["assessment_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_roster_events_assessment", table_name="roster_events")
    op.drop_table("roster_events")
    op.drop_index("ix_roster_people_assessment", table_name="roster_people")
    op.drop_table("roster_people")

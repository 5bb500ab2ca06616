"""Approver roles granted to principals; approval events carry the roles held.

Revision ID: 0007
Revises: 0006
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
_BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "role_grants",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("principal", sa.String(length=256), nullable=False),
        sa.Column("role", sa.String(length=64), nullable=False),
        sa.Column("granted_by", sa.String(length=256), nullable=False),
        sa.Column("granted_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("tenant_id", "principal", "role", name="uq_role_grant"),
    )
    op.create_table(
        "role_grant_events",
        sa.Column("id", _BIG_ID, autoincrement=True, nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("principal", sa.String(length=256), nullable=False),
        sa.Column("role", sa.String(length=64), nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("actor_id", sa.String(length=256), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_role_grant_events_principal", "role_grant_events", ["tenant_id", "principal", "id"]
    )
    # Events recorded before roles were granted carried the one role their body claimed.
    with op.batch_alter_table("approval_events", schema=None) as batch_op:
        batch_op.add_column(sa.Column("approver_roles", _JSON, nullable=True))
        batch_op.alter_column("approver_role", existing_type=sa.String(length=64), nullable=True)
    array = "jsonb_build_array" if op.get_bind().dialect.name == "postgresql" else "json_array"
    op.execute(f"UPDATE approval_events SET approver_roles = {array}(approver_role)")
    with op.batch_alter_table("approval_events", schema=None) as batch_op:
        batch_op.alter_column("approver_roles", existing_type=_JSON, nullable=False)


def downgrade() -> None:
    events = sa.table("approval_events", sa.column("approver_role", sa.String()))
    op.get_bind().execute(
        events.update().where(events.c.approver_role.is_(None)).values(approver_role="")
    )
    with op.batch_alter_table("approval_events", schema=None) as batch_op:
        batch_op.drop_column("approver_roles")
        batch_op.alter_column("approver_role", existing_type=sa.String(length=64), nullable=False)
    op.drop_index("ix_role_grant_events_principal", table_name="role_grant_events")
    op.drop_table("role_grant_events")
    op.drop_table("role_grants")

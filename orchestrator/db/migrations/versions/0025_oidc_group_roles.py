"""Console sign-in with an OIDC identity provider: its groups mapped to roles per tenant,
the audit trail of the mapping, and the groups each person signed in with.

Revision ID: 0025
Revises: 0024
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0025"
down_revision: str | Sequence[str] | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
_BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "oidc_group_roles",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("group_name", sa.String(length=256), nullable=False),
        sa.Column("role", sa.String(length=64), nullable=False),
        sa.Column("scopes", _JSON, nullable=False),
        sa.Column("granted_by", sa.String(length=256), nullable=False),
        sa.Column("granted_at", _WHEN, nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("tenant_id", "group_name", "role", name="uq_oidc_group_role"),
    )
    op.create_table(
        "oidc_group_role_events",
        sa.Column("id", _BIG_ID, autoincrement=True, nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("group_name", sa.String(length=256), nullable=False),
        sa.Column("role", sa.String(length=64), nullable=False),
        sa.Column("scopes", _JSON, nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("actor_id", sa.String(length=256), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("created_at", _WHEN, nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_oidc_group_role_events_group",
        "oidc_group_role_events",
        ["tenant_id", "group_name", "id"],
    )
    op.create_table(
        "oidc_identities",
        sa.Column("principal", sa.String(length=256), nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("issuer", sa.String(length=512), nullable=False),
        sa.Column("subject", sa.String(length=256), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=True),
        sa.Column("groups", _JSON, nullable=False),
        sa.Column("signed_in_at", _WHEN, nullable=False),
        sa.PrimaryKeyConstraint("principal"),
    )


def downgrade() -> None:
    op.drop_table("oidc_identities")
    op.drop_index("ix_oidc_group_role_events_group", table_name="oidc_group_role_events")
    op.drop_table("oidc_group_role_events")
    op.drop_table("oidc_group_roles")

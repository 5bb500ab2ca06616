"""Approvals are sealed: an approval event keeps the digest of the content it decided on
and of every document version that content cites, so a later change can be named.

Revision ID: 0018
Revises: 0017
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0018"
down_revision: str | Sequence[str] | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("approval_events") as table:
        table.add_column(sa.Column("content_sha256", sa.String(length=64), nullable=True))
        table.add_column(sa.Column("cited_documents", _JSON, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("approval_events") as table:
        table.drop_column("cited_documents")
        table.drop_column("content_sha256")

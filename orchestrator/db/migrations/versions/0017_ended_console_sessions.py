"""Console sessions end on the server at sign-out: the ids of sessions signed out before
their cookie's expiry.

Revision ID: 0017
Revises: 0016
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | Sequence[str] | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "ended_console_sessions",
        sa.Column("session_id", sa.String(length=64), nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("session_id"),
    )
    op.create_index(
        "ix_ended_console_sessions_expires_at", "ended_console_sessions", ["expires_at"]
    )


def downgrade() -> None:
    op.drop_index("ix_ended_console_sessions_expires_at", "ended_console_sessions")
    op.drop_table("ended_console_sessions")

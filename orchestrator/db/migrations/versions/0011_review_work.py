"""Review work: claims on a gate's review, comments on drafts, per-tenant gate settings,
and the approval event's record of an amender allowed to approve.

Revision ID: 0011
Revises: 0010
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "review_claims",
        sa.Column("run_id", sa.Uuid(), sa.ForeignKey("workflow_runs.id"), nullable=False),
        sa.Column("artifact_kind", sa.String(length=64), nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("artifact_version", sa.Integer(), nullable=False),
        sa.Column("claimed_by", sa.String(length=256), nullable=False),
        sa.Column("claimed_at", _WHEN, nullable=False),
        sa.Column("expires_at", _WHEN, nullable=False),
        sa.PrimaryKeyConstraint("run_id", "artifact_kind"),
    )
    op.create_index("ix_review_claims_expiry", "review_claims", ["expires_at"])
    op.create_table(
        "review_comments",
        sa.Column("id", _BIG_ID, autoincrement=True, nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("run_id", sa.Uuid(), sa.ForeignKey("workflow_runs.id"), nullable=False),
        sa.Column("artifact_kind", sa.String(length=64), nullable=False),
        sa.Column("artifact_version", sa.Integer(), nullable=False),
        sa.Column("row_name", sa.String(length=300), nullable=True),
        sa.Column("author", sa.String(length=256), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("created_at", _WHEN, nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_review_comments_draft", "review_comments", ["run_id", "artifact_kind", "id"]
    )
    op.create_table(
        "gate_settings",
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("artifact_kind", sa.String(length=64), nullable=False),
        sa.Column("amender_may_approve", sa.Boolean(), nullable=False),
        sa.Column("updated_by", sa.String(length=256), nullable=False),
        sa.Column("updated_at", _WHEN, nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "artifact_kind"),
    )
    with op.batch_alter_table("approval_events") as table:
        table.add_column(sa.Column("amender_waiver", sa.Boolean(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("approval_events") as table:
        table.drop_column("amender_waiver")
    op.drop_table("gate_settings")
    op.drop_index("ix_review_comments_draft", table_name="review_comments")
    op.drop_table("review_comments")
    op.drop_index("ix_review_claims_expiry", table_name="review_claims")
    op.drop_table("review_claims")

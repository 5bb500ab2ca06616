"""Continuous assessment: documents with an owner, dates and versions; reassessments of
what changed and the row-level approvals they ask for.

Revision ID: 0012
Revises: 0011
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_WHEN = sa.DateTime(timezone=True)
_JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    # Plain ADD COLUMN (no table copy): rows referencing these tables stay valid on SQLite.
    op.add_column("assessments", sa.Column("carry_over_from", sa.Uuid(), nullable=True))
    for column in (
        sa.Column("owner", sa.String(length=256), nullable=True),
        sa.Column("effective_on", sa.Date(), nullable=True),
        sa.Column("review_every_days", sa.Integer(), nullable=True),
        sa.Column("expires_on", sa.Date(), nullable=True),
        sa.Column("series_id", sa.Uuid(), nullable=True),
        sa.Column("series_version", sa.Integer(), nullable=False, server_default="1"),
        sa.Column("superseded_by", sa.Uuid(), nullable=True),
        sa.Column("life_status", sa.String(length=16), nullable=False, server_default="current"),
        sa.Column("reminded_at", _WHEN, nullable=True),
        sa.Column("expired_at", _WHEN, nullable=True),
    ):
        op.add_column("documents", column)
    op.create_index("ix_documents_series_id", "documents", ["series_id"])
    op.create_table(
        "reassessments",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("assessment_id", sa.Uuid(), sa.ForeignKey("assessments.id"), nullable=False),
        sa.Column("base_run_id", sa.Uuid(), sa.ForeignKey("workflow_runs.id"), nullable=False),
        sa.Column("base_artifact_id", sa.Uuid(), sa.ForeignKey("artifacts.id"), nullable=False),
        sa.Column("trigger", sa.String(length=32), nullable=False),
        sa.Column("trigger_key", sa.String(length=256), nullable=False),
        sa.Column("changed_documents", _JSON, nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("result_artifact_id", sa.Uuid(), nullable=True),
        sa.Column("figures", _JSON, nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_by", sa.String(length=256), nullable=False),
        sa.Column("created_at", _WHEN, nullable=False),
        sa.Column("evaluated_at", _WHEN, nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("assessment_id", "trigger_key", name="uq_reassessment_trigger"),
    )
    op.create_index("ix_reassessments_assessment", "reassessments", ["assessment_id", "created_at"])
    op.create_table(
        "row_approvals",
        sa.Column("id", _BIG_ID, autoincrement=True, nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("reassessment_id", sa.Uuid(), sa.ForeignKey("reassessments.id"), nullable=False),
        sa.Column("artifact_id", sa.Uuid(), sa.ForeignKey("artifacts.id"), nullable=False),
        sa.Column("row_name", sa.String(length=300), nullable=False),
        sa.Column("row_sha256", sa.String(length=64), nullable=False),
        sa.Column("approver_id", sa.String(length=256), nullable=False),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.Column("created_at", _WHEN, nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("artifact_id", "row_name", name="uq_row_approval"),
    )
    op.create_table(
        "evidence_requests",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("assessment_id", sa.Uuid(), sa.ForeignKey("assessments.id"), nullable=False),
        sa.Column("requirements", _JSON, nullable=False),
        sa.Column("recipient", sa.String(length=256), nullable=False),
        sa.Column("instructions", sa.Text(), nullable=False),
        sa.Column("due_on", sa.Date(), nullable=False),
        sa.Column("link_expires_at", _WHEN, nullable=False),
        sa.Column("token_sha256", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("window_start", _WHEN, nullable=True),
        sa.Column("window_uploads", sa.Integer(), nullable=False),
        sa.Column("created_by", sa.String(length=256), nullable=False),
        sa.Column("created_at", _WHEN, nullable=False),
        sa.Column("answered_at", _WHEN, nullable=True),
        sa.Column("revoked_at", _WHEN, nullable=True),
        sa.Column("reminded_at", _WHEN, nullable=True),
        sa.Column("escalated_at", _WHEN, nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token_sha256"),
    )
    op.create_index("ix_evidence_requests_due", "evidence_requests", ["status", "due_on"])
    op.create_index("ix_evidence_requests_assessment_id", "evidence_requests", ["assessment_id"])
    op.create_table(
        "evidence_request_uploads",
        sa.Column("id", _BIG_ID, autoincrement=True, nullable=False),
        sa.Column("request_id", sa.Uuid(), sa.ForeignKey("evidence_requests.id"), nullable=False),
        sa.Column("document_id", sa.Uuid(), sa.ForeignKey("documents.id"), nullable=False),
        sa.Column("created_at", _WHEN, nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_evidence_request_uploads_request_id", "evidence_request_uploads", ["request_id"]
    )


def downgrade() -> None:
    op.drop_index("ix_evidence_request_uploads_request_id", table_name="evidence_request_uploads")
    op.drop_table("evidence_request_uploads")
    op.drop_index("ix_evidence_requests_assessment_id", table_name="evidence_requests")
    op.drop_index("ix_evidence_requests_due", table_name="evidence_requests")
    op.drop_table("evidence_requests")
    op.drop_table("row_approvals")
    op.drop_index("ix_reassessments_assessment", table_name="reassessments")
    op.drop_table("reassessments")
    # Plain DROP COLUMN (SQLite 3.35+): no table copy under rows that reference it.
    op.drop_index("ix_documents_series_id", table_name="documents")
    for column in (
        "expired_at",
        "reminded_at",
        "life_status",
        "superseded_by",
        "series_version",
        "series_id",
        "expires_on",
        "review_every_days",
        "effective_on",
        "owner",
    ):
        op.drop_column("documents", column)
    op.drop_column("assessments", "carry_over_from")

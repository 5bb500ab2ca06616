"""Risks proposed by gap findings, held apart from the register until a person accepts,
merges or rejects them (ISO/IEC 27001 6.1.2: the assessment proposes, a person decides).

Revision ID: 0026
Revises: 0025
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0026"
down_revision: str | Sequence[str] | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_WHEN = sa.DateTime(timezone=True)
_JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "risk_proposals",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("organization_id", sa.String(length=128), nullable=False),
        sa.Column("assessment_id", sa.Uuid(), sa.ForeignKey("assessments.id"), nullable=False),
        sa.Column("run_id", sa.Uuid(), sa.ForeignKey("workflow_runs.id"), nullable=False),
        sa.Column("gap_version", sa.Integer(), nullable=False),
        sa.Column("finding", sa.String(length=200), nullable=False),
        sa.Column("content", _JSON, nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("risk_id", sa.Uuid(), sa.ForeignKey("risks.id"), nullable=True),
        sa.Column("decision_note", sa.Text(), nullable=True),
        sa.Column("decided_by", sa.String(length=256), nullable=True),
        sa.Column("decided_at", _WHEN, nullable=True),
        sa.Column("created_at", _WHEN, nullable=False),
        sa.Column("updated_at", _WHEN, nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("assessment_id", "finding", name="uq_risk_proposal_finding"),
    )
    op.create_index("ix_risk_proposals_risk", "risk_proposals", ["risk_id"])


def downgrade() -> None:
    op.drop_index("ix_risk_proposals_risk", table_name="risk_proposals")
    op.drop_table("risk_proposals")

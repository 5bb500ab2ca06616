"""Catalogue adoptions: an assessment moved to another catalogue version, with the diff
shown and the rows re-opened.

Revision ID: 0014
Revises: 0013
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0014"
down_revision: str | Sequence[str] | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_WHEN = sa.DateTime(timezone=True)
_JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "catalogue_adoptions",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("assessment_id", sa.Uuid(), sa.ForeignKey("assessments.id"), nullable=False),
        sa.Column("run_id", sa.Uuid(), sa.ForeignKey("workflow_runs.id"), nullable=False),
        sa.Column("catalog_name", sa.String(length=256), nullable=False),
        sa.Column("from_catalog_id", sa.Uuid(), nullable=False),
        sa.Column("to_catalog_id", sa.Uuid(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("idempotency_key", sa.String(length=256), nullable=False),
        sa.Column("diff", _JSON, nullable=False),
        sa.Column("reopened_rows", _JSON, nullable=False),
        sa.Column("reassessment_id", sa.Uuid(), sa.ForeignKey("reassessments.id"), nullable=True),
        sa.Column("created_by", sa.String(length=256), nullable=False),
        sa.Column("created_at", _WHEN, nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("assessment_id", "idempotency_key", name="uq_catalogue_adoption_key"),
    )
    op.create_index(
        "ix_catalogue_adoptions_assessment",
        "catalogue_adoptions",
        ["assessment_id", "created_at"],
    )


def downgrade() -> None:
    op.drop_index("ix_catalogue_adoptions_assessment", table_name="catalogue_adoptions")
    op.drop_table("catalogue_adoptions")

"""The risk register: an organisation's risks across its assessments, each change a
version (ISO/IEC 27001 6.1.2 risk assessment, 6.1.3 treatment and acceptance).

Revision ID: 0023
Revises: 0018
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0023"
down_revision: str | Sequence[str] | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_WHEN = sa.DateTime(timezone=True)
_JSON = sa.JSON().with_variant(JSONB(), "postgresql")
_BIGID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "risks",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("organization_id", sa.String(length=128), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_by", sa.String(length=256), nullable=False),
        sa.Column("created_at", _WHEN, nullable=False),
        sa.Column("updated_at", _WHEN, nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_risks_organization", "risks", ["tenant_id", "organization_id"])
    op.create_table(
        "risk_versions",
        sa.Column("id", _BIGID, autoincrement=True, nullable=False),
        sa.Column("risk_id", sa.Uuid(), sa.ForeignKey("risks.id"), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("change", sa.String(length=16), nullable=False),
        sa.Column("assessment_id", sa.Uuid(), sa.ForeignKey("assessments.id"), nullable=False),
        sa.Column("title", sa.String(length=300), nullable=False),
        sa.Column("asset", sa.Text(), nullable=False),
        sa.Column("threat", sa.Text(), nullable=False),
        sa.Column("vulnerability", sa.Text(), nullable=False),
        sa.Column("likelihood", sa.Integer(), nullable=False),
        sa.Column("impact", sa.Integer(), nullable=False),
        sa.Column("owner", sa.String(length=256), nullable=False),
        sa.Column("treatment", sa.String(length=16), nullable=False),
        sa.Column("treatment_plan", sa.Text(), nullable=False),
        sa.Column("controls", _JSON, nullable=False),
        sa.Column("requirements", _JSON, nullable=False),
        sa.Column("residual_likelihood", sa.Integer(), nullable=True),
        sa.Column("residual_impact", sa.Integer(), nullable=True),
        sa.Column("accepted_by", sa.String(length=256), nullable=True),
        sa.Column("accepted_at", _WHEN, nullable=True),
        sa.Column("acceptance_note", sa.Text(), nullable=True),
        sa.Column("actor_id", sa.String(length=256), nullable=False),
        sa.Column("created_at", _WHEN, nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("risk_id", "version", name="uq_risk_version"),
    )


def downgrade() -> None:
    op.drop_table("risk_versions")
    op.drop_index("ix_risks_organization", table_name="risks")
    op.drop_table("risks")

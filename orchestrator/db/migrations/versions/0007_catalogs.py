"""Control catalogues: versions, controls, frameworks, requirements and crosswalk links.

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


def upgrade() -> None:
    op.create_table(
        "catalogs",
        sa.Column("id", sa.Uuid(), primary_key=True),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=300), nullable=False),
        sa.Column("version", sa.String(length=64), nullable=False),
        sa.Column("source_name", sa.String(length=300), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("licence", sa.String(length=300), nullable=False),
        sa.Column("attribution", sa.Text(), nullable=False),
        sa.Column("details", _JSON, nullable=False),
        sa.Column("imported_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("name", "version", name="uq_catalogs_name_version"),
    )
    op.create_table(
        "catalog_controls",
        sa.Column("catalog_id", sa.Uuid(), sa.ForeignKey("catalogs.id"), primary_key=True),
        sa.Column("control_id", sa.String(length=64), primary_key=True),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("domain", sa.String(length=64), nullable=False),
        sa.Column("domain_name", sa.String(length=300), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("details", _JSON, nullable=False),
    )
    op.create_table(
        "frameworks",
        sa.Column("id", sa.Uuid(), primary_key=True),
        sa.Column("catalog_id", sa.Uuid(), sa.ForeignKey("catalogs.id"), nullable=False),
        sa.Column("name", sa.String(length=300), nullable=False),
        sa.Column("version", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("crosswalk", sa.String(length=300), nullable=True),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("details", _JSON, nullable=False),
        sa.UniqueConstraint("catalog_id", "name", name="uq_frameworks_catalog_name"),
    )
    op.create_index("ix_frameworks_catalog_id", "frameworks", ["catalog_id"])
    op.create_table(
        "framework_requirements",
        sa.Column("framework_id", sa.Uuid(), sa.ForeignKey("frameworks.id"), primary_key=True),
        sa.Column("requirement_id", sa.String(length=200), primary_key=True),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
    )
    op.create_table(
        "requirement_links",
        sa.Column("framework_id", sa.Uuid(), sa.ForeignKey("frameworks.id"), primary_key=True),
        sa.Column("requirement_id", sa.String(length=200), primary_key=True),
        sa.Column("control_id", sa.String(length=64), primary_key=True),
    )
    op.create_index("ix_requirement_links_framework", "requirement_links", ["framework_id"])


def downgrade() -> None:
    op.drop_index("ix_requirement_links_framework", table_name="requirement_links")
    op.drop_table("requirement_links")
    op.drop_table("framework_requirements")
    op.drop_index("ix_frameworks_catalog_id", table_name="frameworks")
    op.drop_table("frameworks")
    op.drop_table("catalog_controls")
    op.drop_table("catalogs")

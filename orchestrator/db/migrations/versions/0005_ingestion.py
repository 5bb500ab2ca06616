"""Ingestion outcomes, chunk provenance (pages) and report export files.

Revision ID: 0005
Revises: 0004
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "document_outcomes",
        sa.Column("document_id", sa.Uuid(), sa.ForeignKey("documents.id"), primary_key=True),
        sa.Column("assessment_id", sa.Uuid(), nullable=False),
        sa.Column("outcome", sa.String(length=16), nullable=False),
        sa.Column("error_code", sa.String(length=32), nullable=True),
        sa.Column("error_message", sa.Text(), nullable=True),
        sa.Column("media_type", sa.String(length=128), nullable=False),
        sa.Column("pages", sa.Integer(), nullable=True),
        sa.Column("characters", sa.Integer(), nullable=False),
        sa.Column("chunks", sa.Integer(), nullable=False),
        sa.Column("duplicate_chunks", sa.Integer(), nullable=False),
        sa.Column("text_sha256", sa.String(length=64), nullable=True),
        sa.Column("duplicate_of", sa.Uuid(), nullable=True),
        sa.Column("metadata", _JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index(
        "ix_document_outcomes_text", "document_outcomes", ["assessment_id", "text_sha256"]
    )
    op.create_table(
        "chunk_provenance",
        sa.Column(
            "chunk_id", sa.String(length=64), sa.ForeignKey("document_chunks.id"), primary_key=True
        ),
        sa.Column("document_id", sa.Uuid(), nullable=False),
        sa.Column("page_start", sa.Integer(), nullable=True),
        sa.Column("page_end", sa.Integer(), nullable=True),
    )
    op.create_index("ix_chunk_provenance_document_id", "chunk_provenance", ["document_id"])
    op.create_table(
        "report_exports",
        sa.Column("id", sa.Uuid(), primary_key=True),
        sa.Column("artifact_id", sa.Uuid(), sa.ForeignKey("artifacts.id"), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("media_type", sa.String(length=128), nullable=False),
        sa.Column("storage_path", sa.Text(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("size_bytes", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("artifact_id", "kind", name="uq_report_export_kind"),
    )
    op.create_index("ix_report_exports_artifact_id", "report_exports", ["artifact_id"])


def downgrade() -> None:
    op.drop_index("ix_report_exports_artifact_id", table_name="report_exports")
    op.drop_table("report_exports")
    op.drop_index("ix_chunk_provenance_document_id", table_name="chunk_provenance")
    op.drop_table("chunk_provenance")
    op.drop_index("ix_document_outcomes_text", table_name="document_outcomes")
    op.drop_table("document_outcomes")

"""Reviewers' amendments to a document's kind and adoption.

Revision ID: 0009
Revises: 0008
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "document_judgement_amendments",
        sa.Column("id", _BIG_ID, autoincrement=True, nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("assessment_id", sa.Uuid(), nullable=False),
        sa.Column("document_id", sa.Uuid(), sa.ForeignKey("documents.id"), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=True),
        sa.Column("adoption", sa.String(length=32), nullable=True),
        sa.Column("kind_before", sa.String(length=32), nullable=True),
        sa.Column("adoption_before", sa.String(length=32), nullable=True),
        sa.Column("actor_id", sa.String(length=256), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("idempotency_key", sa.String(length=256), nullable=False),
        sa.Column("request_sha256", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("document_id", "idempotency_key", name="uq_document_judgement_key"),
    )
    op.create_index(
        "ix_document_judgement_amendments_assessment",
        "document_judgement_amendments",
        ["assessment_id", "id"],
    )


def downgrade() -> None:
    op.drop_index(
        "ix_document_judgement_amendments_assessment", table_name="document_judgement_amendments"
    )
    op.drop_table("document_judgement_amendments")

"""Job batches: the slices of a job that fans out, tracked until every one is done.

Revision ID: 0013
Revises: 0012
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0013"
down_revision: str | Sequence[str] | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_WHEN = sa.DateTime(timezone=True)
_JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "job_batches",
        sa.Column("id", sa.String(length=240), nullable=False),
        sa.Column("job_id", sa.String(length=200), nullable=False),
        sa.Column("run_id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("step", sa.String(length=64), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("items", _JSON, nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("lease_until", _WHEN, nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", _WHEN, nullable=False),
        sa.Column("finished_at", _WHEN, nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("job_id", "seq", name="uq_job_batches_seq"),
    )
    op.create_index("ix_job_batches_run", "job_batches", ["run_id", "step"])


def downgrade() -> None:
    op.drop_index("ix_job_batches_run", table_name="job_batches")
    op.drop_table("job_batches")

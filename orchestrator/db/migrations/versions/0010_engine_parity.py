"""Engine parity: effects outside the database, handoffs, export targets, sweep runs,
and each run's origin and authority.

Revision ID: 0010
Revises: 0009
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
_TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.add_column("workflow_runs", sa.Column("origin", sa.String(length=32), nullable=True))
    op.add_column("workflow_runs", sa.Column("origin_ref", sa.String(length=256), nullable=True))
    op.add_column("workflow_runs", sa.Column("authority", _JSON, nullable=True))
    op.create_table(
        "export_targets",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("url", sa.String(length=2000), nullable=False),
        sa.Column("secret", sa.String(length=200), nullable=False),
        sa.Column("artifact_kinds", _JSON, nullable=False),
        sa.Column("idempotent", sa.Boolean(), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("created_by", sa.String(length=256), nullable=False),
        sa.Column("created_at", _TIME, nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("tenant_id", "url", name="uq_export_target_url"),
    )
    op.create_index("ix_export_targets_tenant_id", "export_targets", ["tenant_id"])
    op.create_table(
        "external_effects",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("run_id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("artifact_kind", sa.String(length=64), nullable=True),
        sa.Column("artifact_version", sa.Integer(), nullable=True),
        sa.Column("target_id", sa.Uuid(), nullable=False),
        sa.Column("compensates_id", sa.Uuid(), nullable=True),
        sa.Column("notification_id", sa.Uuid(), nullable=True),
        sa.Column("idempotent", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(length=24), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", _TIME, nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("undo_requested_at", _TIME, nullable=True),
        sa.Column("undo_reason", sa.String(length=32), nullable=True),
        sa.Column("created_at", _TIME, nullable=False),
        sa.Column("updated_at", _TIME, nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_external_effects_run_id", "external_effects", ["run_id"])
    op.create_index("ix_external_effects_compensates_id", "external_effects", ["compensates_id"])
    op.create_index("ix_external_effects_due", "external_effects", ["status", "next_attempt_at"])
    op.create_table(
        "handoffs",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("run_id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("effect_id", sa.Uuid(), nullable=False),
        sa.Column("reason", sa.String(length=32), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.Column("allowed_actions", _JSON, nullable=False),
        sa.Column("owner", sa.String(length=256), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("fence", sa.Integer(), nullable=False),
        sa.Column("claimed_by", sa.String(length=256), nullable=True),
        sa.Column("claimed_until", _TIME, nullable=True),
        sa.Column("opened_at", _TIME, nullable=False),
        sa.Column("resolved_at", _TIME, nullable=True),
        sa.Column("resolved_by", sa.String(length=256), nullable=True),
        sa.Column("action", sa.String(length=24), nullable=True),
        sa.Column("evidence_ref", sa.Text(), nullable=True),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_handoffs_run_id", "handoffs", ["run_id"])
    op.create_index("ix_handoffs_effect_id", "handoffs", ["effect_id"])
    op.create_index("ix_handoffs_open", "handoffs", ["tenant_id", "status"])
    op.create_table(
        "sweep_runs",
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("runs", sa.Integer(), nullable=False),
        sa.Column("last_started_at", _TIME, nullable=False),
        sa.Column("last_finished_at", _TIME, nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("name"),
    )


def downgrade() -> None:
    op.drop_table("sweep_runs")
    for index in ("ix_handoffs_open", "ix_handoffs_effect_id", "ix_handoffs_run_id"):
        op.drop_index(index, table_name="handoffs")
    op.drop_table("handoffs")
    for index in (
        "ix_external_effects_due",
        "ix_external_effects_compensates_id",
        "ix_external_effects_run_id",
    ):
        op.drop_index(index, table_name="external_effects")
    op.drop_table("external_effects")
    op.drop_index("ix_export_targets_tenant_id", table_name="export_targets")
    op.drop_table("export_targets")
    # Plain ALTER TABLE ... DROP COLUMN (SQLite 3.35+): a batch copy of the runs table
    # would trip the foreign keys that reference it.
    for column in ("authority", "origin_ref", "origin"):
        op.drop_column("workflow_runs", column)

"""Sweeps and notifications: markers, cursors, job watch, dead letters, webhooks.

Also the indexes that let each sweep read only what is due.

Revision ID: 0004
Revises: 0003
"""

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_TS = sa.DateTime(timezone=True)


def _partial(where: str) -> dict[str, Any]:
    return {"postgresql_where": sa.text(where), "sqlite_where": sa.text(where)}


def upgrade() -> None:
    _lifecycle_indexes()
    _sweep_tables()
    _notification_tables()


def _lifecycle_indexes() -> None:
    op.create_index(
        "ix_inbox_pending_since", "signal_inbox", ["received_at"], **_partial("fate = 'pending'")
    )
    op.create_index(
        "ix_steps_open_waits", "step_executions", ["started_at"], **_partial("status = 'waiting'")
    )
    op.create_index("ix_jobs_due", "jobs", ["status", "kind", "updated_at"])
    op.create_index("ix_runs_created_at", "workflow_runs", ["created_at"])
    op.create_index("ix_runs_updated_at", "workflow_runs", ["updated_at"])


def _sweep_tables() -> None:
    op.create_table(
        "sweep_marks",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("run_id", sa.Uuid(), nullable=False),
        sa.Column("mark", sa.String(length=32), nullable=False),
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("details", _JSON, nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("run_id", "mark", "key", name="uq_sweep_mark"),
    )
    op.create_table(
        "sweep_cursors",
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("position", _TS, nullable=False),
        sa.Column("position_id", sa.String(length=64), nullable=False),
        sa.Column("updated_at", _TS, nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "inbox_rekicks",
        sa.Column("run_id", sa.Uuid(), nullable=False),
        sa.Column("kicks", sa.Integer(), nullable=False),
        sa.Column("kicked_at", _TS, nullable=False),
        sa.Column("next_at", _TS, nullable=False),
        sa.Column("last_signal_id", _ID, nullable=False),
        sa.PrimaryKeyConstraint("run_id"),
    )
    op.create_index("ix_inbox_rekicks_next_at", "inbox_rekicks", ["next_at"])
    op.create_table(
        "job_watch",
        sa.Column("job_id", sa.String(length=200), nullable=False),
        sa.Column("redispatches", sa.Integer(), nullable=False),
        sa.Column("redispatched_at", _TS, nullable=True),
        sa.Column("heartbeat_at", _TS, nullable=True),
        sa.PrimaryKeyConstraint("job_id"),
    )
    op.create_table(
        "dead_letters",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("job_id", sa.String(length=200), nullable=False),
        sa.Column("run_id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("step", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("task_name", sa.String(length=128), nullable=False),
        sa.Column("queue", sa.String(length=64), nullable=False),
        sa.Column("request", _JSON, nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("deliveries", sa.Integer(), nullable=False),
        sa.Column("redispatches", sa.Integer(), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("replayed_at", _TS, nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("job_id"),
    )
    op.create_index("ix_dead_letters_run_id", "dead_letters", ["run_id"])


def _notification_tables() -> None:
    op.create_table(
        "webhook_subscriptions",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("url", sa.String(length=2000), nullable=False),
        sa.Column("secret", sa.String(length=200), nullable=False),
        sa.Column("event_types", _JSON, nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("created_by", sa.String(length=256), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("tenant_id", "url", name="uq_webhook_tenant_url"),
    )
    op.create_index("ix_webhook_subscriptions_tenant_id", "webhook_subscriptions", ["tenant_id"])
    op.create_table(
        "notifications",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("run_id", sa.Uuid(), nullable=True),
        sa.Column("event_type", sa.String(length=64), nullable=False),
        sa.Column("payload", _JSON, nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_notifications_tenant_id", "notifications", ["tenant_id"])
    op.create_index("ix_notifications_run_id", "notifications", ["run_id"])
    op.create_table(
        "notification_deliveries",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("notification_id", sa.Uuid(), nullable=False),
        sa.Column("subscription_id", sa.Uuid(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", _TS, nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("delivered_at", _TS, nullable=True),
        sa.Column("created_at", _TS, nullable=False),
        sa.ForeignKeyConstraint(["notification_id"], ["notifications.id"]),
        sa.ForeignKeyConstraint(["subscription_id"], ["webhook_subscriptions.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("notification_id", "subscription_id", name="uq_delivery_target"),
    )
    op.create_index("ix_deliveries_due", "notification_deliveries", ["status", "next_attempt_at"])
    op.create_table(
        "delivery_attempts",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("delivery_id", _ID, nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("succeeded", sa.Boolean(), nullable=False),
        sa.Column("duration_ms", sa.Integer(), nullable=False),
        sa.Column("started_at", _TS, nullable=False),
        sa.ForeignKeyConstraint(["delivery_id"], ["notification_deliveries.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("delivery_id", "attempt", name="uq_delivery_attempt"),
    )


def downgrade() -> None:
    for table in (
        "delivery_attempts",
        "notification_deliveries",
        "notifications",
        "webhook_subscriptions",
        "dead_letters",
        "job_watch",
        "inbox_rekicks",
        "sweep_cursors",
        "sweep_marks",
    ):
        op.drop_table(table)
    op.drop_index("ix_runs_updated_at", table_name="workflow_runs")
    op.drop_index("ix_runs_created_at", table_name="workflow_runs")
    op.drop_index("ix_jobs_due", table_name="jobs")
    op.drop_index("ix_steps_open_waits", table_name="step_executions")
    op.drop_index("ix_inbox_pending_since", table_name="signal_inbox")

"""Tables of the sweeps and notifications: markers, cursors, dead letters, webhooks.

Every effect a sweep has is guarded by a unique key here, so two sweeps running at once
produce it once. A few indexes on the lifecycle's tables make sweeps cost what is due.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Boolean,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    Uuid,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from orchestrator.contracts.ids import new_id
from orchestrator.db.models import (
    Base,
    BigId,
    InboxSignal,
    Job,
    JsonDoc,
    StepExecution,
    WorkflowRun,
)

# --- indexes on lifecycle tables (created by migration 0004) -----------------------------

PENDING_FATE = text("fate = 'pending'")
WAITING_STEP = text("status = 'waiting'")

#: Pending signals by age: the inbox sweep reads only these.
Index(
    "ix_inbox_pending_since",
    InboxSignal.received_at,
    postgresql_where=PENDING_FATE,
    sqlite_where=PENDING_FATE,
)
#: Open waits by start time: the approval sweep reads the slice that just became due.
Index(
    "ix_steps_open_waits",
    StepExecution.started_at,
    postgresql_where=WAITING_STEP,
    sqlite_where=WAITING_STEP,
)
#: Active jobs by kind and age: the lost-job sweep reads one due range per kind.
Index("ix_jobs_due", Job.status, Job.kind, Job.updated_at)
#: Runs by creation (SLA deadline) and by last change (staleness).
Index("ix_runs_created_at", WorkflowRun.created_at)
Index("ix_runs_updated_at", WorkflowRun.updated_at)


class SweepMark(Base):
    """One effect a sweep had on a run: inserted once, so it fires once.

    `mark` names the effect (reminded, escalated, approval_blocked, sla_breached, stale);
    `key` names the occasion (the wait `step:attempt`, the idle run's version, ...).
    """

    __tablename__ = "sweep_marks"
    __table_args__ = (UniqueConstraint("run_id", "mark", "key", name="uq_sweep_mark"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    run_id: Mapped[uuid.UUID] = mapped_column(Uuid)
    mark: Mapped[str] = mapped_column(String(32))
    key: Mapped[str] = mapped_column(String(200), default="")
    details: Mapped[dict[str, Any]] = mapped_column(JsonDoc, default=dict)
    created_at: Mapped[datetime]


class SweepCursor(Base):
    """How far a time-window sweep has read: (position, position_id) of the last row seen."""

    __tablename__ = "sweep_cursors"

    name: Mapped[str] = mapped_column(String(128), primary_key=True)
    position: Mapped[datetime]
    position_id: Mapped[str] = mapped_column(String(64), default="")
    updated_at: Mapped[datetime]


class InboxRekick(Base):
    """When the inbox sweep last woke a run, for which signal, and when it may again."""

    __tablename__ = "inbox_rekicks"

    run_id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True)
    kicks: Mapped[int] = mapped_column(Integer, default=0)
    kicked_at: Mapped[datetime]
    next_at: Mapped[datetime] = mapped_column(index=True)
    last_signal_id: Mapped[int] = mapped_column(BigId)
    """The newest pending signal (inbox row id) the run was woken for."""


class JobWatch(Base):
    """A job's liveness as the sweep sees it: heartbeats and re-dispatches.

    No foreign key to `jobs` on purpose: a running job holds its row lock for the whole
    job, and a key check from a heartbeat would wait on it.
    """

    __tablename__ = "job_watch"

    job_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    redispatches: Mapped[int] = mapped_column(Integer, default=0)
    redispatched_at: Mapped[datetime | None]
    heartbeat_at: Mapped[datetime | None]


class DeadLetter(Base):
    """A job given up on: lost after every re-dispatch. Visible, replayable, resolvable."""

    __tablename__ = "dead_letters"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    job_id: Mapped[str] = mapped_column(String(200), unique=True)
    run_id: Mapped[uuid.UUID] = mapped_column(Uuid, index=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    step: Mapped[str] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(64))
    task_name: Mapped[str] = mapped_column(String(128))
    queue: Mapped[str] = mapped_column(String(64))
    request: Mapped[dict[str, Any]] = mapped_column(JsonDoc)
    reason: Mapped[str] = mapped_column(Text)
    deliveries: Mapped[int] = mapped_column(Integer)
    redispatches: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime]
    replayed_at: Mapped[datetime | None]
    resolved_at: Mapped[datetime | None]
    """Set when the step later succeeded, or an operator resolved the letter by hand."""
    resolved_by: Mapped[str | None] = mapped_column(String(256))
    resolution: Mapped[str | None] = mapped_column(Text)


class WebhookSubscription(Base):
    """A tenant's outbound webhook: where to POST and the secret that signs each body."""

    __tablename__ = "webhook_subscriptions"
    __table_args__ = (UniqueConstraint("tenant_id", "url", name="uq_webhook_tenant_url"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=new_id)
    tenant_id: Mapped[str] = mapped_column(String(128), index=True)
    url: Mapped[str] = mapped_column(String(2000))
    secret: Mapped[str] = mapped_column(String(200))
    event_types: Mapped[list[str]] = mapped_column(JsonDoc, default=list)
    """Empty: every event type."""
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_by: Mapped[str] = mapped_column(String(256))
    created_at: Mapped[datetime]


class Notification(Base):
    """One event to tell a tenant about. Its id is the event id receivers dedupe on."""

    __tablename__ = "notifications"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True)
    tenant_id: Mapped[str] = mapped_column(String(128), index=True)
    run_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, index=True)
    event_type: Mapped[str] = mapped_column(String(64))
    payload: Mapped[dict[str, Any]] = mapped_column(JsonDoc)
    created_at: Mapped[datetime]


class NotificationDelivery(Base):
    """One notification to one subscription: pending -> delivering -> delivered | failed."""

    __tablename__ = "notification_deliveries"
    __table_args__ = (
        UniqueConstraint("notification_id", "subscription_id", name="uq_delivery_target"),
        Index("ix_deliveries_due", "status", "next_attempt_at"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    notification_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("notifications.id"))
    subscription_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("webhook_subscriptions.id"))
    status: Mapped[str] = mapped_column(String(16))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime]
    """When pending: the earliest next try. When delivering: the lease's end."""
    last_error: Mapped[str | None] = mapped_column(Text)
    delivered_at: Mapped[datetime | None]
    created_at: Mapped[datetime]


class DeliveryAttempt(Base):
    """Every POST made for a delivery, successful or not."""

    __tablename__ = "delivery_attempts"
    __table_args__ = (UniqueConstraint("delivery_id", "attempt", name="uq_delivery_attempt"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    delivery_id: Mapped[int] = mapped_column(ForeignKey("notification_deliveries.id"))
    attempt: Mapped[int] = mapped_column(Integer)
    status_code: Mapped[int | None] = mapped_column(Integer)
    error: Mapped[str | None] = mapped_column(Text)
    succeeded: Mapped[bool] = mapped_column(Boolean)
    duration_ms: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[datetime]

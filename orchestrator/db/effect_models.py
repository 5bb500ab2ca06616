"""Tables of effects outside the database: export targets, the effect ledger, handoffs,
and when each sweep last ran (the scheduler's pulse)."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import Boolean, Index, Integer, String, Text, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from orchestrator.contracts.ids import new_id
from orchestrator.db.models import Base, JsonDoc


class ExportTarget(Base):
    """Where a tenant's published drafts go: POSTed, signed with the target's secret."""

    __tablename__ = "export_targets"
    __table_args__ = (UniqueConstraint("tenant_id", "url", name="uq_export_target_url"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=new_id)
    tenant_id: Mapped[str] = mapped_column(String(128), index=True)
    url: Mapped[str] = mapped_column(String(2000))
    secret: Mapped[str] = mapped_column(String(200))
    artifact_kinds: Mapped[list[str]] = mapped_column(JsonDoc, default=list)
    """Empty: every kind the run's definition publishes."""
    idempotent: Mapped[bool] = mapped_column(Boolean, default=False)
    """The target honours Idempotency-Key: sending a publication twice stores it once."""
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_by: Mapped[str] = mapped_column(String(256))
    created_at: Mapped[datetime]


class ExternalEffect(Base):
    """One effect outside the database, recorded before it is made; its id is derived from
    what it is, so asking for it twice records it once."""

    __tablename__ = "external_effects"
    __table_args__ = (Index("ix_external_effects_due", "status", "next_attempt_at"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True)
    run_id: Mapped[uuid.UUID] = mapped_column(Uuid, index=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    kind: Mapped[str] = mapped_column(String(32))
    artifact_kind: Mapped[str | None] = mapped_column(String(64))
    artifact_version: Mapped[int | None] = mapped_column(Integer)
    target_id: Mapped[uuid.UUID] = mapped_column(Uuid)
    """The export target, or the webhook subscription (withdrawals)."""
    compensates_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, index=True)
    """For an undo: the effect it undoes."""
    notification_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    """For a withdrawal: the webhook event it withdraws."""
    idempotent: Mapped[bool] = mapped_column(Boolean)
    status: Mapped[str] = mapped_column(String(24))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime]
    """When pending: the earliest next try. When performing: the lease's end."""
    status_code: Mapped[int | None] = mapped_column(Integer)
    last_error: Mapped[str | None] = mapped_column(Text)
    undo_requested_at: Mapped[datetime | None]
    """Its version was rejected, superseded or cancelled: undo it once it is known made."""
    undo_reason: Mapped[str | None] = mapped_column(String(32))
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class Handoff(Base):
    """An effect whose fate a person decides. Claimed under a fence: each claim raises
    `fence`, and a resolution names the fence it holds, so two operators never both
    resolve one handoff."""

    __tablename__ = "handoffs"
    __table_args__ = (Index("ix_handoffs_open", "tenant_id", "status"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True)
    run_id: Mapped[uuid.UUID] = mapped_column(Uuid, index=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    effect_id: Mapped[uuid.UUID] = mapped_column(Uuid, index=True)
    reason: Mapped[str] = mapped_column(String(32))
    detail: Mapped[str] = mapped_column(Text)
    allowed_actions: Mapped[list[str]] = mapped_column(JsonDoc)
    owner: Mapped[str] = mapped_column(String(256))
    """The run's starter, who is told."""
    status: Mapped[str] = mapped_column(String(16))
    fence: Mapped[int] = mapped_column(Integer, default=0)
    claimed_by: Mapped[str | None] = mapped_column(String(256))
    claimed_until: Mapped[datetime | None]
    opened_at: Mapped[datetime]
    resolved_at: Mapped[datetime | None]
    resolved_by: Mapped[str | None] = mapped_column(String(256))
    action: Mapped[str | None] = mapped_column(String(24))
    evidence_ref: Mapped[str | None] = mapped_column(Text)
    comment: Mapped[str | None] = mapped_column(Text)


class SweepRun(Base):
    """When a scheduled sweep last ran: beat is alive while these keep moving."""

    __tablename__ = "sweep_runs"

    name: Mapped[str] = mapped_column(String(128), primary_key=True)
    runs: Mapped[int] = mapped_column(Integer, default=0)
    last_started_at: Mapped[datetime]
    last_finished_at: Mapped[datetime | None]
    last_error: Mapped[str | None] = mapped_column(Text)

"""SQLAlchemy models: one set for PostgreSQL and SQLite. Alembic migrations mirror them."""

from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Date,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    Uuid,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from orchestrator.contracts.ids import new_id

JsonDoc = JSON().with_variant(JSONB(), "postgresql")
# SQLite has no 64-bit autoincrement BIGINT; INTEGER PRIMARY KEY is its rowid.
BigId = BigInteger().with_variant(Integer(), "sqlite")
Timestamp = DateTime(timezone=True)


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JsonDoc, datetime: Timestamp}


class Assessment(Base):
    __tablename__ = "assessments"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=new_id)
    tenant_id: Mapped[str] = mapped_column(String(128), index=True)
    organization_id: Mapped[str] = mapped_column(String(128))
    name: Mapped[str] = mapped_column(String(300))
    status: Mapped[str] = mapped_column(String(32), default="draft")
    created_by: Mapped[str] = mapped_column(String(256))
    created_at: Mapped[datetime]
    closed_at: Mapped[datetime | None]
    carry_over_from: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    """The previous period's assessment whose approved rows this one starts from (0012)."""


class WorkflowRun(Base):
    __tablename__ = "workflow_runs"
    __table_args__ = (
        # At most one active run per assessment: terminal runs clear active_assessment_id.
        UniqueConstraint("active_assessment_id", name="uq_runs_one_active_per_assessment"),
        UniqueConstraint("tenant_id", "start_idempotency_key", name="uq_runs_start_key"),
        Index("ix_runs_tenant_status", "tenant_id", "status"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=new_id)
    assessment_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("assessments.id"), index=True)
    active_assessment_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    tenant_id: Mapped[str] = mapped_column(String(128))
    organization_id: Mapped[str] = mapped_column(String(128))
    status: Mapped[str] = mapped_column(String(32))
    current_step: Mapped[str | None] = mapped_column(String(64))
    reason: Mapped[str | None] = mapped_column(Text)
    context: Mapped[dict[str, Any]] = mapped_column(default=dict)
    version: Mapped[int] = mapped_column(Integer, default=1)
    trace_id: Mapped[str] = mapped_column(String(128))
    started_by: Mapped[str] = mapped_column(String(256))
    start_idempotency_key: Mapped[str] = mapped_column(String(256))
    start_request_hash: Mapped[str] = mapped_column(String(64))
    origin: Mapped[str | None] = mapped_column(String(32))
    """How the run was started (contracts.origins.StartOrigin); None: before origins."""
    origin_ref: Mapped[str | None] = mapped_column(String(256))
    authority: Mapped[dict[str, Any] | None]
    """Who the run acts for outside the database: principal, API key id, scopes."""
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    completed_at: Mapped[datetime | None]


class StepExecution(Base):
    __tablename__ = "step_executions"
    __table_args__ = (UniqueConstraint("run_id", "step", "attempt", name="uq_step_attempt"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("workflow_runs.id"), index=True)
    step: Mapped[str] = mapped_column(String(64))
    attempt: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(32))
    error: Mapped[str | None] = mapped_column(Text)
    started_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]


#: Tables whose rows are written once and updated once on an indexed column: room kept on
#: each page for that update (migration 0015 says why).
UPDATED_ONCE: dict[str, Any] = {"postgresql_with": {"fillfactor": 70}}


class InboxSignal(Base):
    """The durable signal inbox: a signal exists here before any message names it."""

    __tablename__ = "signal_inbox"
    __table_args__ = (
        UniqueConstraint("run_id", "idempotency_key", name="uq_inbox_run_key"),
        Index("ix_inbox_pending", "run_id", "fate", "id"),
        UPDATED_ONCE,
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    signal_id: Mapped[uuid.UUID] = mapped_column(Uuid, unique=True)
    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("workflow_runs.id"))
    type: Mapped[str] = mapped_column(String(64))
    idempotency_key: Mapped[str] = mapped_column(String(256))
    content_hash: Mapped[str] = mapped_column(String(64))
    envelope: Mapped[dict[str, Any]]
    fate: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str | None] = mapped_column(Text)
    received_at: Mapped[datetime]
    decided_at: Mapped[datetime | None]


class SignalConflict(Base):
    """A signal that reused an idempotency key with a different payload: never applied."""

    __tablename__ = "signal_conflicts"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("workflow_runs.id"), index=True)
    idempotency_key: Mapped[str] = mapped_column(String(256))
    original_signal_id: Mapped[uuid.UUID] = mapped_column(Uuid)
    envelope: Mapped[dict[str, Any]]
    received_at: Mapped[datetime]


class OutboxMessage(Base):
    """Messages to publish after commit; a sweep publishes any left behind."""

    __tablename__ = "outbox"
    __table_args__ = (Index("ix_outbox_unpublished", "published_at", "id"), UPDATED_ONCE)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    run_id: Mapped[uuid.UUID] = mapped_column(Uuid, index=True)
    task_name: Mapped[str] = mapped_column(String(128))
    queue: Mapped[str] = mapped_column(String(64))
    task_id: Mapped[str] = mapped_column(String(200), unique=True)
    body: Mapped[dict[str, Any]]
    created_at: Mapped[datetime]
    published_at: Mapped[datetime | None]


class Job(Base):
    __tablename__ = "jobs"
    __table_args__ = (Index("ix_jobs_status", "status", "updated_at"),)

    id: Mapped[str] = mapped_column(String(200), primary_key=True)
    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("workflow_runs.id"), index=True)
    step: Mapped[str] = mapped_column(String(64))
    step_attempt: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(64))
    queue: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16))
    deliveries: Mapped[int] = mapped_column(Integer, default=0)
    request: Mapped[dict[str, Any]]
    summary: Mapped[dict[str, Any] | None]
    error: Mapped[dict[str, Any] | None]
    created_at: Mapped[datetime]
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]
    updated_at: Mapped[datetime]


class AuditEvent(Base):
    __tablename__ = "audit_events"
    __table_args__ = (Index("ix_audit_run", "run_id", "id"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    organization_id: Mapped[str] = mapped_column(String(128))
    assessment_id: Mapped[uuid.UUID] = mapped_column(Uuid)
    run_id: Mapped[uuid.UUID] = mapped_column(Uuid)
    step: Mapped[str | None] = mapped_column(String(64))
    event_type: Mapped[str] = mapped_column(String(64))
    actor_id: Mapped[str] = mapped_column(String(256))
    trace_id: Mapped[str] = mapped_column(String(128))
    event_metadata: Mapped[dict[str, Any]] = mapped_column("metadata", default=dict)
    created_at: Mapped[datetime]


class ApprovalEvent(Base):
    __tablename__ = "approval_events"
    __table_args__ = (Index("ix_approvals_artifact", "artifact_id"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=new_id)
    tenant_id: Mapped[str] = mapped_column(String(128))
    organization_id: Mapped[str] = mapped_column(String(128))
    assessment_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("assessments.id"))
    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("workflow_runs.id"))
    artifact_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("artifacts.id"))
    artifact_kind: Mapped[str] = mapped_column(String(64))
    artifact_version: Mapped[int] = mapped_column(Integer)
    approver_id: Mapped[str] = mapped_column(String(256))
    approver_role: Mapped[str | None] = mapped_column(String(64))
    """The role the reviewer named, if any (it must be one they held)."""
    approver_roles: Mapped[list[str]] = mapped_column(JsonDoc)
    """The roles the event carries: the one named, or every role held at the time."""
    decision: Mapped[str] = mapped_column(String(32))
    comment: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime]
    consumed_by_signal_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    consumed_at: Mapped[datetime | None]
    amender_waiver: Mapped[bool | None]
    """Recorded by the amender of this version while the tenant's setting for the gate let
    amenders approve (migration 0011; None before it: no waiver)."""
    content_sha256: Mapped[str | None] = mapped_column(String(64))
    """SHA-256 of the canonical JSON of the content decided on (migration 0018; None before
    it: unsealed)."""
    cited_documents: Mapped[dict[str, Any] | None]
    """Document id -> SHA-256 of every document version the content cites, when decided."""


class Document(Base):
    __tablename__ = "documents"
    __table_args__ = (UniqueConstraint("assessment_id", "sha256", name="uq_document_content"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=new_id)
    tenant_id: Mapped[str] = mapped_column(String(128))
    assessment_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("assessments.id"), index=True)
    filename: Mapped[str] = mapped_column(String(500))
    media_type: Mapped[str] = mapped_column(String(128))
    size_bytes: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(String(64))
    storage_path: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(32), default="uploaded")
    error: Mapped[str | None] = mapped_column(Text)
    chunk_count: Mapped[int] = mapped_column(Integer, default=0)
    uploaded_by: Mapped[str] = mapped_column(String(256))
    created_at: Mapped[datetime]
    # Evidence with a life (migration 0012): who keeps it, from when it holds, until when.
    owner: Mapped[str | None] = mapped_column(String(256))
    effective_on: Mapped[date | None] = mapped_column(Date)
    review_every_days: Mapped[int | None] = mapped_column(Integer)
    expires_on: Mapped[date | None] = mapped_column(Date)
    """The date the evidence stops holding: given, or effective date + review cadence."""
    series_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, index=True)
    """The logical document every version shares (the first version's id)."""
    series_version: Mapped[int] = mapped_column(Integer, default=1)
    superseded_by: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    life_status: Mapped[str] = mapped_column(String(16), default="current")
    """current, superseded (a newer version exists) or expired (past its date)."""
    reminded_at: Mapped[datetime | None]
    expired_at: Mapped[datetime | None]


class DocumentChunk(Base):
    __tablename__ = "document_chunks"
    __table_args__ = (UniqueConstraint("document_id", "ordinal", name="uq_chunk_ordinal"),)

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    document_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("documents.id"), index=True)
    assessment_id: Mapped[uuid.UUID] = mapped_column(Uuid, index=True)
    ordinal: Mapped[int] = mapped_column(Integer)
    heading_path: Mapped[str] = mapped_column(Text, default="")
    text: Mapped[str] = mapped_column(Text)
    sha256: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime]


class ChunkEmbedding(Base):
    __tablename__ = "chunk_embeddings"

    chunk_id: Mapped[str] = mapped_column(ForeignKey("document_chunks.id"), primary_key=True)
    assessment_id: Mapped[uuid.UUID] = mapped_column(Uuid, index=True)
    model: Mapped[str] = mapped_column(String(128))
    dimensions: Mapped[int] = mapped_column(Integer)
    vector: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime]


class Artifact(Base):
    """An immutable, versioned draft (scope, SoA, gap analysis, ..., report)."""

    __tablename__ = "artifacts"
    __table_args__ = (UniqueConstraint("run_id", "kind", "version", name="uq_artifact_version"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=new_id)
    tenant_id: Mapped[str] = mapped_column(String(128))
    assessment_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("assessments.id"))
    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("workflow_runs.id"), index=True)
    kind: Mapped[str] = mapped_column(String(64))
    version: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(32), default="draft")
    content: Mapped[dict[str, Any]]
    media_type: Mapped[str] = mapped_column(String(128), default="application/json")
    storage_path: Mapped[str | None] = mapped_column(Text)
    sha256: Mapped[str] = mapped_column(String(64))
    created_by_job_id: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime]

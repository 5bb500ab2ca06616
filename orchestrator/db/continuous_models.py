"""Tables of continuous assessment: reassessments of what changed and the row-level
approvals they ask for. Migration 0012 creates them (and the documents' life columns).

A reassessment names the approved SoA it starts from and the documents that changed; its
evaluation writes the SoA's next version only when a row's evidence changed, and that
version's changed rows are approved one by one, each approval bound to the row's content.
"""

from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Any

from sqlalchemy import Date, ForeignKey, Index, Integer, String, Text, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from orchestrator.contracts.ids import new_id
from orchestrator.db.models import Base, BigId, JsonDoc


class Reassessment(Base):
    __tablename__ = "reassessments"
    __table_args__ = (
        UniqueConstraint("assessment_id", "trigger_key", name="uq_reassessment_trigger"),
        Index("ix_reassessments_assessment", "assessment_id", "created_at"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=new_id)
    tenant_id: Mapped[str] = mapped_column(String(128))
    assessment_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("assessments.id"))
    base_run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("workflow_runs.id"))
    base_artifact_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("artifacts.id"))
    trigger: Mapped[str] = mapped_column(String(32))
    trigger_key: Mapped[str] = mapped_column(String(256))
    changed_documents: Mapped[list[str]] = mapped_column(JsonDoc)
    status: Mapped[str] = mapped_column(String(32))
    """pending, no_change, awaiting_approval or approved."""
    result_artifact_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    figures: Mapped[dict[str, Any] | None]
    """Rows re-evaluated, rows changed, rows carried over, seconds."""
    error: Mapped[str | None] = mapped_column(Text)
    created_by: Mapped[str] = mapped_column(String(256))
    created_at: Mapped[datetime]
    evaluated_at: Mapped[datetime | None]


class RowApproval(Base):
    __tablename__ = "row_approvals"
    __table_args__ = (UniqueConstraint("artifact_id", "row_name", name="uq_row_approval"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    reassessment_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("reassessments.id"))
    artifact_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("artifacts.id"))
    row_name: Mapped[str] = mapped_column(String(300))
    row_sha256: Mapped[str] = mapped_column(String(64))
    """The content of the row approved: an approval of another content is refused."""
    approver_id: Mapped[str] = mapped_column(String(256))
    comment: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime]


class EvidenceRequest(Base):
    """A request for evidence to someone outside the product, answered through a link."""

    __tablename__ = "evidence_requests"
    __table_args__ = (Index("ix_evidence_requests_due", "status", "due_on"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=new_id)
    tenant_id: Mapped[str] = mapped_column(String(128))
    assessment_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("assessments.id"), index=True)
    requirements: Mapped[list[str]] = mapped_column(JsonDoc)
    recipient: Mapped[str] = mapped_column(String(256))
    instructions: Mapped[str] = mapped_column(Text)
    due_on: Mapped[date] = mapped_column(Date)
    link_expires_at: Mapped[datetime]
    token_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    """The link's secret is never stored, only its hash."""
    status: Mapped[str] = mapped_column(String(16))
    """open, answered or revoked."""
    window_start: Mapped[datetime | None]
    window_uploads: Mapped[int] = mapped_column(Integer, default=0)
    created_by: Mapped[str] = mapped_column(String(256))
    created_at: Mapped[datetime]
    answered_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]
    reminded_at: Mapped[datetime | None]
    escalated_at: Mapped[datetime | None]


class EvidenceRequestUpload(Base):
    __tablename__ = "evidence_request_uploads"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    request_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("evidence_requests.id"), index=True)
    document_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("documents.id"))
    created_at: Mapped[datetime]


class CatalogueAdoption(Base):
    """An assessment moved to another version of a catalogue, by an explicit action: the
    diff it was shown, the rows re-opened, and the reassessment that re-opens them.
    Migration 0014 creates it."""

    __tablename__ = "catalogue_adoptions"
    __table_args__ = (
        UniqueConstraint("assessment_id", "idempotency_key", name="uq_catalogue_adoption_key"),
        Index("ix_catalogue_adoptions_assessment", "assessment_id", "created_at"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=new_id)
    tenant_id: Mapped[str] = mapped_column(String(128))
    assessment_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("assessments.id"))
    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("workflow_runs.id"))
    catalog_name: Mapped[str] = mapped_column(String(256))
    from_catalog_id: Mapped[uuid.UUID] = mapped_column(Uuid)
    to_catalog_id: Mapped[uuid.UUID] = mapped_column(Uuid)
    reason: Mapped[str] = mapped_column(Text)
    idempotency_key: Mapped[str] = mapped_column(String(256))
    diff: Mapped[dict[str, Any]] = mapped_column(JsonDoc)
    reopened_rows: Mapped[list[str]] = mapped_column(JsonDoc)
    reassessment_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("reassessments.id"))
    created_by: Mapped[str] = mapped_column(String(256))
    created_at: Mapped[datetime]

"""Read models returned by the producer (and later the API): plain, frozen, JSON-ready."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from orchestrator.contracts.signals import SignalFate
from orchestrator.db.models import Assessment, WorkflowRun


class _View(BaseModel):
    # from_attributes: a view is read straight off the ORM row whose names it shares.
    model_config = ConfigDict(frozen=True, from_attributes=True)

    @field_validator("*", mode="after")
    @classmethod
    def _times_are_utc(cls, value: Any) -> Any:
        # SQLite hands back naive datetimes; every time stored here is UTC.
        if isinstance(value, datetime) and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value


class AssessmentView(_View):
    id: uuid.UUID
    tenant_id: str
    organization_id: str
    name: str
    status: str
    created_at: datetime
    carry_over_from: uuid.UUID | None = None
    """The previous period's assessment its drafts start from."""

    @classmethod
    def of(cls, row: Assessment) -> AssessmentView:
        return cls.model_validate(row)


class RunView(_View):
    id: uuid.UUID
    assessment_id: uuid.UUID
    tenant_id: str
    organization_id: str
    status: str
    current_step: str | None
    reason: str | None
    version: int
    trace_id: str
    context: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    completed_at: datetime | None
    origin: str | None = None
    """How it was started (user, api, schedule, reassessment, retry, replay)."""
    origin_ref: str | None = None
    authority: dict[str, Any] | None = None
    """Who it acts for outside the database: principal, API key id, scopes at start."""

    @classmethod
    def of(cls, row: WorkflowRun | Any) -> RunView:
        """From the ORM object or a Core row of the runs table (same attribute names)."""
        return cls(
            id=row.id,
            assessment_id=row.assessment_id,
            tenant_id=row.tenant_id,
            organization_id=row.organization_id,
            status=row.status,
            current_step=row.current_step,
            reason=row.reason,
            version=row.version,
            trace_id=row.trace_id,
            context=dict(row.context or {}),
            created_at=row.created_at,
            updated_at=row.updated_at,
            completed_at=row.completed_at,
            origin=row.origin,
            origin_ref=row.origin_ref,
            authority=row.authority,
        )


class SignalReceipt(_View):
    signal_id: uuid.UUID
    fate: SignalFate
    reason: str | None
    duplicate: bool
    run: RunView


class DocumentView(_View):
    id: uuid.UUID
    filename: str
    media_type: str
    size_bytes: int
    sha256: str
    status: str
    waiting_for: str | None = None
    """Not ingested yet (status `uploaded`): `ingestion` (the run's, or the next run's)
    or `reassessment` (the active run passed ingestion: the next reassessment ingests
    it, service.document_waits)."""
    duplicate: bool = False


# --- read models of a run's history (listings of the HTTP API) -------------------------------


class StepView(_View):
    step: str
    attempt: int
    status: str
    error: str | None
    started_at: datetime
    finished_at: datetime | None


class SignalView(_View):
    """A signal as recorded in the inbox, with its fate."""

    signal_id: uuid.UUID
    type: str
    idempotency_key: str
    fate: SignalFate
    reason: str | None
    actor_id: str
    approval_event_id: uuid.UUID | None
    payload: dict[str, Any]
    received_at: datetime
    decided_at: datetime | None


class JobView(_View):
    id: str
    step: str
    step_attempt: int
    kind: str
    queue: str
    status: str
    deliveries: int
    summary: dict[str, Any] | None
    error: dict[str, Any] | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


class AuditEventView(_View):
    id: int
    step: str | None
    event_type: str
    actor_id: str
    trace_id: str
    metadata: dict[str, Any]
    created_at: datetime


class ArtifactView(_View):
    id: uuid.UUID
    kind: str
    version: int
    status: str
    media_type: str
    sha256: str
    has_file: bool
    """A rendered file exists (the report); otherwise the content is the artifact."""
    created_by_job_id: str
    created_at: datetime


class ApprovalRecordView(_View):
    """A recorded approval decision and, once an approval signal used it, which one."""

    id: uuid.UUID
    artifact_id: uuid.UUID
    artifact_kind: str
    artifact_version: int
    approver_id: str
    approver_role: str | None
    """The role the reviewer named, if any."""
    approver_roles: list[str]
    """The roles the event carried: the one named, or every role held when it was recorded."""
    decision: str
    comment: str | None
    created_at: datetime
    consumed_by_signal_id: uuid.UUID | None


class BatchProgressView(_View):
    """How far a job that fans out has come: its batches done of all (a failed batch has
    used up its attempts; the job's next delivery queues it again)."""

    job_id: str
    step: str
    done: int
    total: int
    failed: int

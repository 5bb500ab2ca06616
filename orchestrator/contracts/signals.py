"""Lifecycle signals: the types the spec accepts and the envelope every one travels in."""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from orchestrator.contracts.artifact_registry import ARTIFACTS
from orchestrator.contracts.ids import new_id
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.contracts.text import NulFree, StatesNulFreeObject, Text

SIGNAL_SCHEMA_VERSION = 1


class SignalType(StrEnum):
    """Every signal a run accepts."""

    # Sent by people (through the API or the Python producer).
    FRAMEWORK_SELECTED = "framework_selected"
    SCOPE_APPROVED = "scope_approved"
    SOA_APPROVED = "soa_approved"
    GAP_ANALYSIS_APPROVED = "gap_analysis_approved"
    MATURITY_APPROVED = "maturity_approved"
    POAM_APPROVED = "poam_approved"
    REPORT_APPROVED = "report_approved"
    ASSESSMENT_CANCELLED = "assessment_cancelled"
    ASSESSMENT_BLOCKED = "assessment_blocked"
    ASSESSMENT_RESUMED = "assessment_resumed"
    # Technical signals.
    DOCUMENTS_UPLOADED = "documents_uploaded"
    DOCUMENTS_INGESTED = "documents_ingested"
    KB_INDEXED = "kb_indexed"
    SCF_PRE_ANALYSIS_COMPLETED = "scf_pre_analysis_completed"
    JOB_COMPLETED = "job_completed"
    JOB_FAILED = "job_failed"
    # Written by the producer with the run itself, so starting is durable too.
    WORKFLOW_START_REQUESTED = "workflow_start_requested"
    # Written with a reviewer's rejection or request for changes (record_approval).
    APPROVAL_REJECTED = "approval_rejected"
    # Operator commands (operations module, API and celery CLI), each with a reason.
    STEP_RETRY_REQUESTED = "step_retry_requested"
    STEP_REPROCESS_REQUESTED = "step_reprocess_requested"
    ARTIFACT_REVISION_REQUESTED = "artifact_revision_requested"
    # Written with a reviewer's amended version of a draft (orchestrator.amendments).
    ARTIFACT_AMENDED = "artifact_amended"
    # Written when an effect outside the database needs a person (a handoff opened), and
    # when a person resolved that handoff (orchestrator.service.handoffs).
    EXTERNAL_EFFECT_STUCK = "external_effect_stuck"
    HANDOFF_RESOLVED = "handoff_resolved"
    # Operator command: move a run to another shipped lifecycle definition.
    DEFINITION_MIGRATION_REQUESTED = "definition_migration_requested"

    @property
    def is_approval(self) -> bool:
        return self in APPROVAL_SIGNALS

    @property
    def names_approval_event(self) -> bool:
        """Approvals and rejections act on an approval event the signal names."""
        return self.is_approval or self is SignalType.APPROVAL_REJECTED

    @property
    def is_job_outcome(self) -> bool:
        return self in JOB_OUTCOME_SIGNALS


class ArtifactKind(StrEnum):
    """Draft artifacts the lifecycle produces and people approve."""

    SCF_PRE_ANALYSIS = "scf_pre_analysis"
    SCOPE = "scope"
    SOA = "soa"
    EVIDENCE_ANALYSIS = "evidence_analysis"
    GAP_ANALYSIS = "gap_analysis"
    MATURITY_ASSESSMENT = "maturity_assessment"
    POAM = "poam"
    REPORT = "report"


#: Approval signal -> the artifact kind it approves (declared in artifact_registry).
APPROVAL_SIGNALS: dict[SignalType, ArtifactKind] = {
    SignalType(d.approved_by): ArtifactKind(d.kind) for d in ARTIFACTS if d.approved_by
}

#: Signals a job posts when it finishes; the step-specific ones carry the same payload.
JOB_OUTCOME_SIGNALS = frozenset(
    {
        SignalType.DOCUMENTS_INGESTED,
        SignalType.KB_INDEXED,
        SignalType.SCF_PRE_ANALYSIS_COMPLETED,
        SignalType.JOB_COMPLETED,
        SignalType.JOB_FAILED,
    }
)

#: Signals only the fleet itself may send; the public API refuses them.
INTERNAL_SIGNALS = JOB_OUTCOME_SIGNALS | {
    SignalType.WORKFLOW_START_REQUESTED,
    SignalType.APPROVAL_REJECTED,
    SignalType.ARTIFACT_AMENDED,
    SignalType.EXTERNAL_EFFECT_STUCK,
    SignalType.HANDOFF_RESOLVED,
}

#: Operator commands: sent through the operations functions, which check their payload.
OPERATOR_SIGNALS = frozenset(
    {
        SignalType.STEP_RETRY_REQUESTED,
        SignalType.STEP_REPROCESS_REQUESTED,
        SignalType.ARTIFACT_REVISION_REQUESTED,
        SignalType.DEFINITION_MIGRATION_REQUESTED,
    }
)


class SignalFate(StrEnum):
    """What became of a signal in the inbox."""

    PENDING = "pending"
    """Recorded; not applied yet (including early signals waiting for their step)."""
    APPLIED = "applied"
    IGNORED = "ignored"
    """Valid but no longer applicable (late, duplicate approval, terminal run)."""
    REJECTED = "rejected"
    """Invalid for this run (failed validation); never applied."""
    CONFLICT = "conflict"
    """Same idempotency key as an earlier signal, with a different payload."""


class SignalEnvelope(BaseModel):
    """A signal as it is validated, stored in the inbox and fed to the lifecycle."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_enum_values=False)

    schema_version: int = SIGNAL_SCHEMA_VERSION
    signal_id: uuid.UUID = Field(default_factory=new_id)
    type: SignalType
    run_id: uuid.UUID
    tenant_id: Text = Field(min_length=1, max_length=128)
    organization_id: Text = Field(min_length=1, max_length=128)
    assessment_id: uuid.UUID
    trace_id: Text = Field(min_length=1, max_length=128)
    actor_id: Text = Field(min_length=1, max_length=256)
    idempotency_key: Text = Field(min_length=1, max_length=256)
    approval_event_id: uuid.UUID | None = None
    step: Step | None = None
    payload: Annotated[dict[str, Any], NulFree, StatesNulFreeObject] = Field(default_factory=dict)
    received_at: datetime | None = None
    traceparent: str | None = Field(None, max_length=128)
    """W3C traceparent of the span that recorded it, when tracing is on (what it caused
    joins that trace); not part of what the signal asks for."""

    @field_validator("payload")
    @classmethod
    def _payload_is_small_json(cls, value: dict[str, Any]) -> dict[str, Any]:
        encoded = json.dumps(value, sort_keys=True, default=str)
        if len(encoded) > 64_000:
            raise ValueError("signal payload exceeds 64 kB")
        return value

    @model_validator(mode="after")
    def _approval_needs_event(self) -> SignalEnvelope:
        if self.type.names_approval_event and self.approval_event_id is None:
            raise ValueError(f"{self.type.value} requires approval_event_id")
        return self

    def content_hash(self) -> str:
        """Hash of what the signal asks for; equal keys with unequal hashes conflict."""
        material = {
            "type": self.type.value,
            "approval_event_id": str(self.approval_event_id) if self.approval_event_id else None,
            "step": self.step.value if self.step else None,
            "payload": self.payload,
        }
        encoded = json.dumps(material, sort_keys=True, default=str).encode()
        return hashlib.sha256(encoded).hexdigest()

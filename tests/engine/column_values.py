"""What the code writes into each bounded text column that takes a value from a closed set
(statuses, kinds, fates, decisions, triggers): the enumerations and constants it writes
them from. `test_column_values` holds every value against the column's length, in the
models and in the migrated PostgreSQL schema."""

from __future__ import annotations

from collections.abc import Iterable

from orchestrator.contracts import documents
from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.events import NotificationEvent
from orchestrator.contracts.external_effects import (
    EffectKind,
    EffectStatus,
    HandoffAction,
    HandoffReason,
)
from orchestrator.contracts.jobs import JobKind, JobStatus
from orchestrator.contracts.origins import StartOrigin
from orchestrator.contracts.risk_method import ProposalStatus, RiskChange, TreatmentOption
from orchestrator.contracts.signals import ArtifactKind, SignalFate, SignalType
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import AssessmentLifecycleStep, StepStatus
from orchestrator.formats.document_errors import DocumentErrorCode
from orchestrator.lifecycle.approval_checks import ApprovalDecision
from orchestrator.notifications.delivery import DeliveryStatus
from orchestrator.service import evidence_requests, handoffs, reassessments
from orchestrator.service.catalogue_adoption import ADOPTION_TRIGGER
from orchestrator.service.roles import RoleAction
from orchestrator.service.roster import RosterAction
from workers.ingestion import store

#: Column names whose values come from a closed set: each such bounded column is listed.
CLOSED_SET_NAMES = frozenset(
    {"status", "life_status", "fate", "decision", "action", "origin", "trigger", "outcome"}
)

STEPS: Iterable[str] = AssessmentLifecycleStep
WRITTEN: dict[tuple[str, str], Iterable[str]] = {
    ("assessments", "status"): ("draft", "active", "closed"),
    ("workflow_runs", "status"): WorkflowStatus,
    ("workflow_runs", "origin"): StartOrigin,
    ("workflow_runs", "current_step"): STEPS,
    ("step_executions", "step"): STEPS,
    ("step_executions", "status"): StepStatus,
    ("jobs", "step"): STEPS,
    ("jobs", "kind"): JobKind,
    ("jobs", "status"): JobStatus,
    ("job_batches", "step"): STEPS,
    ("job_batches", "status"): JobStatus,
    ("dead_letters", "step"): STEPS,
    ("audit_events", "step"): STEPS,
    ("audit_events", "event_type"): AuditEventType,
    ("notifications", "event_type"): NotificationEvent,
    ("notification_deliveries", "status"): DeliveryStatus,
    ("signal_inbox", "type"): SignalType,
    ("signal_inbox", "fate"): SignalFate,
    ("artifacts", "kind"): ArtifactKind,
    ("artifacts", "status"): ("draft", "approved", reassessments.REASSESSED),
    ("approval_events", "artifact_kind"): ArtifactKind,
    ("approval_events", "decision"): ApprovalDecision,
    ("review_claims", "artifact_kind"): ArtifactKind,
    ("review_comments", "artifact_kind"): ArtifactKind,
    ("gate_settings", "artifact_kind"): ArtifactKind,
    ("external_effects", "kind"): EffectKind,
    ("external_effects", "status"): EffectStatus,
    ("external_effects", "artifact_kind"): ArtifactKind,
    ("handoffs", "reason"): HandoffReason,
    ("handoffs", "action"): HandoffAction,
    ("handoffs", "status"): (handoffs.OPEN, handoffs.RESOLVED),
    ("role_grant_events", "action"): RoleAction,
    ("oidc_group_role_events", "action"): RoleAction,
    ("roster_events", "action"): RosterAction,
    ("documents", "status"): ("uploaded", store.INGESTED, store.FAILED, store.DUPLICATE),
    ("documents", "life_status"): documents.LIFE_STATUSES,
    ("document_outcomes", "outcome"): (store.INGESTED, store.FAILED, store.DUPLICATE),
    ("document_outcomes", "error_code"): DocumentErrorCode,
    ("document_judgement_amendments", "kind"): documents.DOCUMENT_KINDS,
    ("document_judgement_amendments", "kind_before"): documents.DOCUMENT_KINDS,
    ("document_judgement_amendments", "adoption"): documents.ADOPTIONS,
    ("document_judgement_amendments", "adoption_before"): documents.ADOPTIONS,
    ("risk_versions", "change"): RiskChange,
    ("risk_versions", "treatment"): TreatmentOption,
    ("risk_proposals", "status"): ProposalStatus,
    ("evidence_requests", "status"): (
        evidence_requests.OPEN,
        evidence_requests.ANSWERED,
        evidence_requests.REVOKED,
    ),
    ("reassessments", "status"): (
        reassessments.PENDING,
        reassessments.NO_CHANGE,
        reassessments.AWAITING_APPROVAL,
        reassessments.APPROVED,
        reassessments.FAILED,
    ),
    ("reassessments", "trigger"): ("new_version", "request_answered", "expired", ADOPTION_TRIGGER),
}

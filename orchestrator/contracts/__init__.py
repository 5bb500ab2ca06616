"""Versioned, frozen contracts shared by the API, the coordinator and the workers."""

from orchestrator.contracts.audit import SYSTEM_ACTOR, AuditEventType
from orchestrator.contracts.jobs import ArtifactRef, JobError, JobKind, JobOutcome, JobRequest
from orchestrator.contracts.signals import (
    APPROVAL_SIGNALS,
    INTERNAL_SIGNALS,
    ArtifactKind,
    SignalEnvelope,
    SignalFate,
    SignalType,
)
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import STEP_ORDER, AssessmentLifecycleStep, StepKind, StepStatus

__all__ = [
    "APPROVAL_SIGNALS",
    "INTERNAL_SIGNALS",
    "STEP_ORDER",
    "SYSTEM_ACTOR",
    "ArtifactKind",
    "ArtifactRef",
    "AssessmentLifecycleStep",
    "AuditEventType",
    "JobError",
    "JobKind",
    "JobOutcome",
    "JobRequest",
    "SignalEnvelope",
    "SignalFate",
    "SignalType",
    "StepKind",
    "StepStatus",
    "WorkflowStatus",
]

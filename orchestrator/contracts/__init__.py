"""Versioned, frozen contracts shared by the API, the coordinator and the workers.

The names below are loaded from their modules on first use: the enums (statuses, steps)
stay cheap to import for the CLI's `--help`, which must not pay for pydantic models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from orchestrator.contracts.audit import SYSTEM_ACTOR, AuditEventType
    from orchestrator.contracts.jobs import (
        ArtifactRef,
        JobError,
        JobKind,
        JobOutcome,
        JobRequest,
    )
    from orchestrator.contracts.signals import (
        APPROVAL_SIGNALS,
        INTERNAL_SIGNALS,
        ArtifactKind,
        SignalEnvelope,
        SignalFate,
        SignalType,
    )
    from orchestrator.contracts.statuses import WorkflowStatus
    from orchestrator.contracts.steps import (
        STEP_ORDER,
        AssessmentLifecycleStep,
        StepKind,
        StepStatus,
    )

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


def __getattr__(name: str) -> Any:
    # Plain imports (no module names in strings), so the layer tests see every edge.
    if name in ("SYSTEM_ACTOR", "AuditEventType"):
        import orchestrator.contracts.audit as audit

        return getattr(audit, name)
    if name in ("ArtifactRef", "JobError", "JobKind", "JobOutcome", "JobRequest"):
        import orchestrator.contracts.jobs as jobs

        return getattr(jobs, name)
    if name in (
        "APPROVAL_SIGNALS",
        "INTERNAL_SIGNALS",
        "ArtifactKind",
        "SignalEnvelope",
        "SignalFate",
        "SignalType",
    ):
        import orchestrator.contracts.signals as signals

        return getattr(signals, name)
    if name == "WorkflowStatus":
        import orchestrator.contracts.statuses as statuses

        return statuses.WorkflowStatus
    if name in ("STEP_ORDER", "AssessmentLifecycleStep", "StepKind", "StepStatus"):
        import orchestrator.contracts.steps as steps

        return getattr(steps, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""Effects the decision function asks for; the coordinator turns them into rows."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.jobs import JobKind
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.contracts.steps import StepStatus


@dataclass(frozen=True)
class StepChanged:
    """A step execution (step, attempt) moved to `status`."""

    step: Step
    attempt: int
    status: StepStatus
    error: str | None = None


@dataclass(frozen=True)
class EnqueueJob:
    job_id: str
    kind: JobKind
    step: Step
    attempt: int
    parameters: dict[str, Any] = field(default_factory=dict)
    requested_by: str = "system:orchestrator"
    """The person whose action caused this job (separation of duties on its draft)."""


@dataclass(frozen=True)
class Audit:
    event_type: AuditEventType
    step: Step | None
    actor_id: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ConsumeApproval:
    """Mark an approval event used; when it opens the gate, the artifact version approved."""

    approval_event_id: uuid.UUID
    artifact_kind: ArtifactKind
    artifact_version: int
    opens_gate: bool = True


@dataclass(frozen=True)
class CancelJobs:
    """Keep queued jobs of the run from starting and ask running ones to stop."""

    reason: str


@dataclass(frozen=True)
class CloseAssessment:
    pass


@dataclass(frozen=True)
class ArtifactStatusChanged:
    """Mark an artifact version rejected (by a reviewer) or superseded (by a reprocess)."""

    kind: ArtifactKind
    version: int
    status: str


@dataclass(frozen=True)
class StepsSuperseded:
    """Every unfinished or completed execution of these steps is replaced by a new attempt."""

    steps: tuple[Step, ...]


@dataclass(frozen=True)
class PublishDraft:
    """Publish this draft outside: to each of the tenant's export targets."""

    kind: ArtifactKind
    version: int


@dataclass(frozen=True)
class Compensate:
    """Undo what `kind` v`version` put outside the database (both None: the whole run's)."""

    reason: str
    kind: ArtifactKind | None = None
    version: int | None = None


Effect = (
    StepChanged
    | EnqueueJob
    | Audit
    | ConsumeApproval
    | CancelJobs
    | CloseAssessment
    | ArtifactStatusChanged
    | StepsSuperseded
    | PublishDraft
    | Compensate
)
